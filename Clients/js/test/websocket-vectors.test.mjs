// Protocol/vectors/websocket from Node's side: the accept key of every
// accepted handshake (node:crypto), and the bytes of every server frame
// (ws-socket.mjs's encoder without a mask; the server's frames are the
// client's without the mask). The Swift codec is checked against all cases
// (Tests/ChecklistWebSocketTests); this keeps the test client honest.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';
import { clientFrame, serverFrames } from './ws-socket.mjs';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'Protocol', 'vectors', 'websocket');
const load = (name) => JSON.parse(readFileSync(join(dir, name), 'utf8')).cases;

test('every accepted handshake answers with the accept key of RFC 6455', () => {
  const cases = load('handshake.json').filter((c) => c.status === 101);
  assert.ok(cases.length >= 3);
  for (const c of cases) {
    const key = /sec-websocket-key: *(\S+)/i.exec(c.request)[1];
    const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
    assert.ok(c.response.includes(`Sec-WebSocket-Accept: ${accept}\r\n`), c.name);
    assert.ok(c.response.startsWith('HTTP/1.1 101 Switching Protocols\r\n') && c.response.endsWith('\r\n\r\n'), c.name);
  }
});

test('every server frame encodes and parses as its vector says', () => {
  for (const c of load('server-frames.json')) {
    const payload = Buffer.from(c.payload, 'hex');
    assert.equal(clientFrame(c.opcode, payload, { mask: null }).toString('hex'), c.frame, c.name);
    const { frames, rest } = serverFrames(Buffer.from(c.frame, 'hex'));
    assert.equal(rest.length, 0, c.name);
    assert.deepEqual([frames[0].opcode, frames[0].fin, Buffer.from(frames[0].payload).toString('hex')], [c.opcode, true, c.payload], c.name);
  }
});
