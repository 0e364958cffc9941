#!/usr/bin/env node
// A development server for the web app: serves Clients/web at / and
// Clients/js at /js/ (the layout checklistd serves), and carries WebSocket
// binary messages on /ws (subprotocol checklists.v1) to and from a
// checklistd TCP port, byte for byte. For working on the page without
// rebuilding checklistd; not for production (no TLS, no origin checks).
//
//   node Clients/dev-server.mjs [--port 8080] [--host 127.0.0.1] [--backend 127.0.0.1:7420]
//
// Prints "dev-server: web on HOST:PORT" when ready. WebSocket per RFC 6455:
// the handshake's accept key, masked client frames, binary and continuation
// frames forwarded, ping answered, close echoed; text frames close with 1003.

import { createServer } from 'node:http';
import { connect } from 'node:net';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join, dirname, normalize, extname } from 'node:path';

const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, arg, i, all) => (arg.startsWith('--') ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs), []));
const port = Number(args.port ?? 8080);
const host = args.host ?? '127.0.0.1';
const [backendHost, backendPort] = (args.backend ?? '127.0.0.1:7420').split(':');
const root = dirname(fileURLToPath(import.meta.url));
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.png': 'image/png', '.svg': 'image/svg+xml' };
const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

async function serveFile(req, res) {
  const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  const file = path === '/' ? 'web/index.html' : path.startsWith('/js/') ? path.slice(1) : `web${path}`;
  const full = normalize(join(root, file));
  if (!full.startsWith(root) || full.endsWith('.mjs')) { res.writeHead(404).end(); return; }
  try {
    const body = await readFile(full);
    res.writeHead(200, { 'content-type': TYPES[extname(full)] ?? 'application/octet-stream', 'cache-control': 'no-cache' }).end(body);
  } catch {
    res.writeHead(404).end('not found');
  }
}

/** One WebSocket frame from the server (never masked). */
function wsFrame(opcode, payload) {
  const n = payload.length;
  const head = n < 126 ? Buffer.from([0x80 | opcode, n])
    : n < 65536 ? Buffer.from([0x80 | opcode, 126, n >> 8, n & 0xff])
      : Buffer.concat([Buffer.from([0x80 | opcode, 127]), (() => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(n)); return b; })()]);
  return Buffer.concat([head, payload]);
}

function upgrade(req, socket) {
  const key = req.headers['sec-websocket-key'];
  const protocols = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  if (new URL(req.url, 'http://x').pathname !== '/ws' || !key || !protocols.includes('checklists.v1')) {
    socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    return;
  }
  const accept = createHash('sha1').update(key + GUID).digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ${accept}\r\nsec-websocket-protocol: checklists.v1\r\n\r\n`);
  const backend = connect(Number(backendPort), backendHost);
  backend.setNoDelay(true);
  backend.on('data', (data) => socket.write(wsFrame(0x2, data)));
  backend.on('close', () => { if (!socket.destroyed) socket.end(wsFrame(0x8, Buffer.from([0x03, 0xe8]))); });
  backend.on('error', () => socket.destroy());
  let buffer = Buffer.alloc(0);
  const close = (code) => { socket.end(wsFrame(0x8, Buffer.from([code >> 8, code & 0xff]))); backend.destroy(); };
  socket.on('data', (data) => {
    buffer = Buffer.concat([buffer, data]);
    for (;;) {
      if (buffer.length < 2) return;
      const opcode = buffer[0] & 0x0f;
      const masked = (buffer[1] & 0x80) !== 0;
      let length = buffer[1] & 0x7f;
      let at = 2;
      if (length === 126) { if (buffer.length < 4) return; length = buffer.readUInt16BE(2); at = 4; }
      else if (length === 127) { if (buffer.length < 10) return; length = Number(buffer.readBigUInt64BE(2)); at = 10; }
      if (!masked) { close(1002); return; }
      if (length > 16 * 1024 * 1024) { close(1009); return; }
      if (buffer.length < at + 4 + length) return;
      const mask = buffer.subarray(at, at + 4);
      const payload = Buffer.from(buffer.subarray(at + 4, at + 4 + length));
      for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i & 3];
      buffer = buffer.subarray(at + 4 + length);
      if (opcode === 0x2 || opcode === 0x0) backend.write(payload);
      else if (opcode === 0x9) socket.write(wsFrame(0xa, payload));
      else if (opcode === 0x8) { close(1000); return; }
      else if (opcode === 0x1) { close(1003); return; }
    }
  });
  socket.on('close', () => backend.destroy());
  socket.on('error', () => backend.destroy());
}

const server = createServer((req, res) => { serveFile(req, res); });
server.on('upgrade', upgrade);
server.listen(port, host, () => {
  const address = server.address();
  console.log(`dev-server: web on ${address.address}:${address.port}`);
});
