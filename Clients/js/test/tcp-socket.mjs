// A WebSocket-like object over a plain TCP connection (Node's net), so that
// the JavaScript client can talk to checklistd's TCP port in tests and tools:
// the protocol's byte stream is the same over TCP and over WebSocket binary
// messages.

import { connect } from 'node:net';

export function tcpSocket(host, port) {
  const listeners = new Map();
  const emit = (type, event = {}) => { for (const fn of listeners.get(type) ?? []) fn(event); };
  const socket = connect(port, host);
  socket.setNoDelay(true);
  const ws = {
    readyState: 0,
    binaryType: 'arraybuffer',
    addEventListener(type, fn) {
      if (!listeners.has(type)) listeners.set(type, []);
      listeners.get(type).push(fn);
    },
    send(bytes) { socket.write(bytes); },
    close() { socket.destroy(); },
  };
  socket.on('connect', () => { ws.readyState = 1; emit('open'); });
  socket.on('data', (data) => emit('message', { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) }));
  socket.on('error', () => emit('error'));
  socket.on('close', () => { ws.readyState = 3; emit('close'); });
  return ws;
}
