// A minimal WebSocket client (RFC 6455) over Node's net, shaped like a
// browser WebSocket for the JavaScript client, written for the tests
// against checklistd's web port (Node 20 has no WebSocket of its own).
// `rawWebSocket` also gives the tests the socket and the byte-level pieces
// to send hostile frames and read what the server answers.

import { connect } from 'node:net';
import { connect as connectTLS } from 'node:tls';
import { createHash, randomBytes } from 'node:crypto';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** A client frame: FIN unless `fin` is false, masked unless `mask` is null. */
export function clientFrame(opcode, payload = new Uint8Array(0), { fin = true, mask = randomBytes(4), rsv = 0 } = {}) {
  const n = payload.length;
  const head = [(fin ? 0x80 : 0) | rsv | opcode];
  const bit = mask ? 0x80 : 0;
  if (n < 126) head.push(bit | n);
  else if (n < 65536) head.push(bit | 126, n >> 8, n & 0xff);
  else { head.push(bit | 127, 0, 0, 0, 0, (n >>> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff); }
  const body = Buffer.from(payload);
  if (mask) for (let i = 0; i < body.length; i++) body[i] ^= mask[i & 3];
  return Buffer.concat([Buffer.from(head), mask ? Buffer.from(mask) : Buffer.alloc(0), body]);
}

/** Parses server frames from `buffer`: [{opcode, fin, payload}], and the bytes left. */
export function serverFrames(buffer) {
  const frames = [];
  let at = 0;
  for (;;) {
    if (buffer.length - at < 2) break;
    const b0 = buffer[at], b1 = buffer[at + 1];
    if (b1 & 0x80) throw new Error('a masked server frame');
    let n = b1 & 0x7f, h = 2;
    if (n === 126) { if (buffer.length - at < 4) break; n = buffer.readUInt16BE(at + 2); h = 4; }
    else if (n === 127) { if (buffer.length - at < 10) break; n = Number(buffer.readBigUInt64BE(at + 2)); h = 10; }
    if (buffer.length - at < h + n) break;
    frames.push({ opcode: b0 & 0x0f, fin: (b0 & 0x80) !== 0, payload: buffer.subarray(at + h, at + h + n) });
    at += h + n;
  }
  return { frames, rest: buffer.subarray(at) };
}

/**
 * Opens a socket to host:port and sends an upgrade request for /ws with
 * `headers` (added to or replacing the usual ones; a null value leaves a
 * field out). Resolves {socket, status, head, rest} once the answer's head is in.
 * With `tls` (options of tls.connect, e.g. {ca}), over TLS (wss).
 */
export function rawWebSocket(host, port, headers = {}, { tls } = {}) {
  return new Promise((resolve, reject) => {
    const key = randomBytes(16).toString('base64');
    const fields = {
      Host: `${host}:${port}`, Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Key': key,
      'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Protocol': 'checklists.v1', ...headers,
    };
    const socket = tls ? connectTLS({ host, port, ...tls }) : connect(port, host);
    socket.setNoDelay(true);
    let buffer = Buffer.alloc(0);
    const onData = (data) => {
      buffer = Buffer.concat([buffer, data]);
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      const head = buffer.subarray(0, end).toString();
      const status = Number(head.split(' ')[1]);
      if (status === 101) {
        const accept = createHash('sha1').update(key + GUID).digest('base64');
        if (!head.includes(`Sec-WebSocket-Accept: ${accept}`)) reject(new Error(`bad accept in ${head}`));
      }
      resolve({ socket, status, head, rest: buffer.subarray(end + 4) });
    };
    socket.on('data', onData);
    socket.on('error', reject);
    socket.on(tls ? 'secureConnect' : 'connect', () => {
      const lines = Object.entries(fields).filter(([, v]) => v !== null).map(([k, v]) => `${k}: ${v}\r\n`).join('');
      socket.write(`GET /ws HTTP/1.1\r\n${lines}\r\n`);
    });
  });
}

/** A WebSocket-like object (addEventListener, send, close, readyState) over rawWebSocket. */
export function wsSocket(host, port) {
  const listeners = new Map();
  const emit = (type, event = {}) => { for (const fn of listeners.get(type) ?? []) fn(event); };
  let socket = null;
  const ws = {
    readyState: 0,
    binaryType: 'arraybuffer',
    pingsSeen: 0,
    addEventListener(type, fn) {
      if (!listeners.has(type)) listeners.set(type, []);
      listeners.get(type).push(fn);
    },
    send(bytes) { socket?.write(clientFrame(0x2, bytes)); },
    close() { socket?.end(clientFrame(0x8, Uint8Array.of(0x03, 0xe8))); },
  };
  rawWebSocket(host, port).then(({ socket: s, status, rest }) => {
    socket = s;
    if (status !== 101) { ws.readyState = 3; emit('error'); emit('close'); s.destroy(); return; }
    let buffer = Buffer.from(rest);
    const pump = () => {
      const { frames, rest: left } = serverFrames(buffer);
      buffer = Buffer.from(left);
      for (const f of frames) {
        if (f.opcode === 0x2) emit('message', { data: new Uint8Array(f.payload) });
        else if (f.opcode === 0x9) { ws.pingsSeen++; s.write(clientFrame(0xa, f.payload)); }
        else if (f.opcode === 0x8) s.end();
      }
    };
    s.on('data', (data) => { buffer = Buffer.concat([buffer, data]); pump(); });
    s.on('close', () => { ws.readyState = 3; emit('close'); });
    ws.readyState = 1;
    emit('open');
    pump();
  }, () => { ws.readyState = 3; emit('error'); emit('close'); });
  return ws;
}
