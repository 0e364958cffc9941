// checklistd's web port (Protocol/WEBSOCKET.md) against a real checklistd:
// the page's files byte for byte, the JavaScript client over WebSocket with
// a TCP subscriber seeing its PATCH live, hostile frames closed with the
// RFC's codes and counted, Origin refusal, ping and pong both ways. Runs
// when CHECKLISTD names the binary (the Swift test JavaScriptClientTests
// sets it); skipped otherwise.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync, readdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { get as httpsGet } from 'node:https';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { Connection, encodeFrame, MessageType } from '../checklists.js';
import { tcpSocket } from './tcp-socket.mjs';
import { wsSocket, rawWebSocket, clientFrame, serverFrames } from './ws-socket.mjs';

const binary = process.env.CHECKLISTD;
const skip = binary ? false : 'CHECKLISTD is not set: the tests against a real checklistd are skipped';
const clients = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const HELLO = Buffer.from('0000001b01000000000101010111636865636b6c6973742d636c692f312e30', 'hex');
let server;
let ports = {};
let dataDir;

before(async () => {
  if (skip) return;
  dataDir = mkdtempSync(join(tmpdir(), 'checklists-ws-'));
  server = spawn(binary, ['--port', '0', '--web-port', '0', '--metrics-port', '0', '--data-dir', dataDir,
    '--web-max-message', '4096', '--web-ping-interval', '1'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const lines = createInterface({ input: server.stdout });
  await new Promise((resolve, reject) => {
    server.on('exit', (code) => reject(new Error(`checklistd exited with ${code}`)));
    lines.on('line', (line) => {
      const match = /(web|metrics|listening) on (?:http:\/\/)?[^:]+:(\d+)/.exec(line);
      if (match) ports[match[1]] = Number(match[2]);
      if (match?.[1] === 'listening') resolve();
    });
  });
  assert.ok(ports.web && ports.metrics, 'the web line comes before the listening line');
});

after(() => {
  if (skip) return;
  server.kill('SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });
});

async function tcpConnection() {
  const c = await Connection.open(tcpSocket('127.0.0.1', ports.listening));
  await c.hello({ clientName: 'ws-test-tcp/1.0' });
  return c;
}

async function webConnection() {
  const c = await Connection.open(wsSocket('127.0.0.1', ports.web));
  await c.hello({ clientName: 'ws-test-web/1.0' });
  return c;
}

/** Server frames on `socket` (after `rest`) until a Close or the end; resolves [{opcode, payload}]. */
function framesUntilClose(socket, rest = Buffer.alloc(0), { answerPings = true } = {}) {
  return new Promise((resolve) => {
    let buffer = Buffer.from(rest);
    const seen = [];
    let done = false;
    const finish = () => { if (!done) { done = true; resolve(seen); } };
    const pump = () => {
      const { frames, rest: left } = serverFrames(buffer);
      buffer = Buffer.from(left);
      for (const f of frames) {
        seen.push(f);
        if (f.opcode === 0x9 && answerPings) socket.write(clientFrame(0xa, f.payload));
        if (f.opcode === 0x8) { socket.end(); finish(); }
      }
    };
    socket.on('data', (d) => { buffer = Buffer.concat([buffer, d]); pump(); });
    socket.on('close', finish);
    socket.on('error', finish);
    pump();
  });
}

const closeCode = (frame) => (frame.payload.length >= 2 ? frame.payload.readUInt16BE(0) : null);

test('the web port serves Clients/web at / and Clients/js at /js/, byte for byte', { skip }, async () => {
  const base = `http://127.0.0.1:${ports.web}`;
  const files = [
    ...readdirSync(join(clients, 'web')).map((f) => [`/${f}`, join(clients, 'web', f)]),
    ...readdirSync(join(clients, 'js')).filter((f) => f.endsWith('.js')).map((f) => [`/js/${f}`, join(clients, 'js', f)]),
    ['/', join(clients, 'web', 'index.html')],
  ];
  assert.ok(files.length >= 10);
  for (const [path, file] of files) {
    const response = await fetch(base + path);
    assert.equal(response.status, 200, path);
    assert.deepEqual(Buffer.from(await response.arrayBuffer()), readFileSync(file), `${path} differs from ${file}: run scripts/generate-web-assets.py`);
  }
  assert.equal((await fetch(`${base}/nope.js`)).status, 404);
  assert.match((await fetch(`${base}/app.js`)).headers.get('content-type'), /^text\/javascript/);
});

test('HELLO split across messages and reads; a PATCH over WebSocket reaches a TCP subscriber live', { skip }, async () => {
  const { socket, status, rest } = await rawWebSocket('127.0.0.1', ports.web);
  assert.equal(status, 101);
  const answer = new Promise((resolve) => {
    let buffer = Buffer.from(rest);
    let stream = Buffer.alloc(0);
    socket.on('data', (d) => {
      buffer = Buffer.concat([buffer, d]);
      const { frames, rest: left } = serverFrames(buffer);
      buffer = Buffer.from(left);
      for (const f of frames) if (f.opcode === 0x2) stream = Buffer.concat([stream, f.payload]);
      if (stream.length >= 4 && stream.length >= 4 + stream.readUInt32BE(0)) resolve(stream);
    });
  });
  const two = Buffer.concat([clientFrame(0x2, HELLO.subarray(0, 5)), clientFrame(0x2, HELLO.subarray(5))]);
  for (const byte of two) socket.write(Buffer.of(byte));
  const hello = await answer;
  assert.equal(hello[4], 0x81, 'HELLO_OK');
  socket.destroy();

  const subscriber = await tcpConnection();
  const writer = await webConnection();
  const list = await writer.createList('Over WebSocket');
  const pushed = new Promise((resolve) => { subscriber.onPush = (m) => { if (m.message === 'CHANGE' && m.fields.list === list.id) resolve(m.fields); }; });
  await subscriber.subscribe({ scope: 0, lists: [{ list: list.id }] });
  await writer.patch(list.id, [{ op: 'INSERT', where: 2, text: 'Sent from a browser', checked: false, remind: false }]);
  const change = await pushed;
  assert.equal(change.ops[0].text, 'Sent from a browser');
  const page = await writer.getPage(list.id, { offset: 0, limit: 10 });
  assert.equal(page.rows[0].text, 'Sent from a browser');
  writer.close();
  subscriber.close();
});

test('hostile frames close with the RFC code and are counted in STATS and /metrics', { skip }, async () => {
  const tcp = await tcpConnection();
  const before = await tcp.stats();
  const cases = [
    ['unmasked', clientFrame(0x2, HELLO, { mask: null }), 1002],
    ['text', clientFrame(0x1, Buffer.from('hello')), 1003],
    ['rsv1', clientFrame(0x2, HELLO, { rsv: 0x40 }), 1002],
    ['reserved opcode', clientFrame(0x3), 1002],
    ['fragmented ping', clientFrame(0x9, Buffer.from('a'), { fin: false }), 1002],
    ['ping over 125 bytes', clientFrame(0x9, Buffer.alloc(126)), 1002],
    ['stray continuation', clientFrame(0x0, Buffer.from('x')), 1002],
    ['message over --web-max-message', clientFrame(0x2, Buffer.alloc(5000)), 1009],
    ['fragments over --web-max-message', Buffer.concat([clientFrame(0x2, Buffer.alloc(3000), { fin: false }), clientFrame(0x0, Buffer.alloc(3000))]), 1009],
    ['close reason not UTF-8', clientFrame(0x8, Buffer.from([0x03, 0xe8, 0xff])), 1007],
  ];
  for (const [name, bytes, code] of cases) {
    const { socket, status, rest } = await rawWebSocket('127.0.0.1', ports.web);
    assert.equal(status, 101, name);
    const frames = framesUntilClose(socket, rest);
    socket.write(bytes);
    const close = (await frames).find((f) => f.opcode === 0x8);
    assert.ok(close, `${name}: a Close frame`);
    assert.equal(closeCode(close), code, name);
  }
  const after = await tcp.stats();
  const delta = (k) => Number(after[k]) - Number(before[k]);
  assert.equal(delta('webClosedProtocolError'), 6);
  assert.equal(delta('webClosedUnsupportedData'), 1);
  assert.equal(delta('webClosedMessageTooBig'), 2);
  assert.equal(delta('webClosedInvalidPayload'), 1);
  const metrics = await (await fetch(`http://127.0.0.1:${ports.metrics}/metrics`)).text();
  assert.match(metrics, /checklistd_websocket_closed_total\{code="1003"\} [1-9]/);
  tcp.close();
});

test('other origins, a missing subprotocol and a bad version are refused and counted; the own origin is allowed', { skip }, async () => {
  const tcp = await tcpConnection();
  const before = await tcp.stats();
  const evil = await rawWebSocket('127.0.0.1', ports.web, { Origin: 'http://evil.example' });
  assert.equal(evil.status, 403);
  evil.socket.destroy();
  const own = await rawWebSocket('127.0.0.1', ports.web, { Origin: `http://127.0.0.1:${ports.web}` });
  assert.equal(own.status, 101);
  assert.match(own.head, /Sec-WebSocket-Protocol: checklists.v1/);
  own.socket.destroy();
  const noProtocol = await rawWebSocket('127.0.0.1', ports.web, { 'Sec-WebSocket-Protocol': null });
  assert.equal(noProtocol.status, 400);
  noProtocol.socket.destroy();
  const version = await rawWebSocket('127.0.0.1', ports.web, { 'Sec-WebSocket-Version': '8' });
  assert.equal(version.status, 426);
  version.socket.destroy();
  const after = await tcp.stats();
  assert.equal(Number(after.webOriginsRefused) - Number(before.webOriginsRefused), 1);
  assert.equal(Number(after.webHandshakesRefused) - Number(before.webHandshakesRefused), 2);
  tcp.close();
});

test('a ping is answered with its payload; a silent client is pinged, then closed with 1001', { skip }, async () => {
  const a = await rawWebSocket('127.0.0.1', ports.web);
  const pong = new Promise((resolve) => {
    let buffer = Buffer.from(a.rest);
    a.socket.on('data', (d) => {
      buffer = Buffer.concat([buffer, d]);
      const found = serverFrames(buffer).frames.find((f) => f.opcode === 0xa);
      if (found) resolve(found.payload.toString());
    });
  });
  a.socket.write(clientFrame(0x9, Buffer.from('are you there')));
  assert.equal(await pong, 'are you there');
  a.socket.destroy();

  const silent = await rawWebSocket('127.0.0.1', ports.web);
  const frames = await framesUntilClose(silent.socket, silent.rest, { answerPings: false });
  assert.ok(frames.some((f) => f.opcode === 0x9), 'a ping came first');
  assert.equal(closeCode(frames.at(-1)), 1001);
});

test('with --tls-cert the web port speaks TLS: the page over https, the protocol over wss', { skip }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'checklists-wss-'));
  try {
    try {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'),
        '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
      { stdio: 'ignore' });
    } catch {
      return; // no openssl command: nothing to make a certificate with (.ci/run installs it)
    }
    const tlsServer = spawn(binary, ['--port', '0', '--web-port', '0', '--data-dir', join(dir, 'data'),
      '--tls-cert', join(dir, 'cert.pem'), '--tls-key', join(dir, 'key.pem')], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const lines = createInterface({ input: tlsServer.stdout });
      const webPort = await new Promise((resolve, reject) => {
        tlsServer.on('exit', (code) => reject(new Error(`checklistd exited with ${code}`)));
        lines.on('line', (line) => { const m = /web on [^:]+:(\d+)$/.exec(line); if (m) resolve(Number(m[1])); });
      });
      const ca = readFileSync(join(dir, 'cert.pem'));
      const page = await new Promise((resolve, reject) => {
        httpsGet({ host: '127.0.0.1', port: webPort, path: '/', ca }, (response) => {
          const chunks = [];
          response.on('data', (c) => chunks.push(c));
          response.on('end', () => resolve({ status: response.statusCode, body: Buffer.concat(chunks) }));
        }).on('error', reject);
      });
      assert.equal(page.status, 200);
      assert.deepEqual(page.body, readFileSync(join(clients, 'web', 'index.html')));
      const { socket, status, rest } = await rawWebSocket('127.0.0.1', webPort, { Origin: `https://127.0.0.1:${webPort}` }, { tls: { ca } });
      assert.equal(status, 101);
      const answer = new Promise((resolve) => {
        let buffer = Buffer.from(rest);
        socket.on('data', (d) => {
          buffer = Buffer.concat([buffer, d]);
          const f = serverFrames(buffer).frames.find((x) => x.opcode === 0x2);
          if (f) resolve(f.payload);
        });
      });
      socket.write(clientFrame(0x2, HELLO));
      assert.equal((await answer)[4], 0x81, 'HELLO_OK over wss');
      socket.destroy();
    } finally {
      tlsServer.kill('SIGTERM');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a WebSocket client that stops reading stalls the server at its output budget, then gets every answer', { skip }, async () => {
  const tcp = await tcpConnection();
  const list = await tcp.createList('Back-pressure');
  for (let i = 0; i < 2; i++) {
    await tcp.patch(list.id, Array.from({ length: 1000 }, (_, j) => ({ op: 'INSERT', where: 2, text: `row ${i * 1000 + j} with some text`, checked: false, remind: false })));
  }
  const before = await tcp.stats();
  const { socket, status, rest } = await rawWebSocket('127.0.0.1', ports.web);
  assert.equal(status, 101);
  socket.pause();  // read nothing for now
  const hello = encodeFrame(MessageType.HELLO, 1, { minVersion: 1, maxVersion: 1, features: 0, clientName: 'stalled' });
  const requests = 1000;
  const pages = [hello];
  for (let i = 0; i < requests; i++) pages.push(encodeFrame(MessageType.GET_PAGE, i + 2, { list: list.id, filter: 0, startKind: 0, start: 0, limit: 1000 }));
  // One message per request: this server takes messages of at most 4096 bytes.
  socket.write(Buffer.concat(pages.map((p) => clientFrame(0x2, Buffer.from(p)))));
  // Each answer is about 35 kB: 1000 of them (35 MB) are far more than the
  // socket buffers and the server's output high-water mark (1 MB), so the
  // server must stop answering: wait (at most 20 s) until its bytesOut grows
  // by no more than the STATS answers themselves over five STATS in a row,
  // then check it sent far less than it owes.
  let last = -1, same = 0, now = 0;
  for (let tries = 0; tries < 1000 && same < 5; tries++) {
    socket.write(clientFrame(0x9));  // input, so this server's 1 s ping timeout does not close us
    now = Number((await tcp.stats()).bytesOut);
    same = last >= 0 && now - last < 2000 ? same + 1 : 0;
    last = now;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.equal(same, 5, 'the server stopped sending to the stalled WebSocket');
  assert.ok(now - Number(before.bytesOut) < 20_000_000, `the server held back its answers (sent ${now - Number(before.bytesOut)} bytes)`);
  assert.equal((await tcp.stats()).connectionsDroppedForOutput, before.connectionsDroppedForOutput);
  // Now read: every answer arrives (a HELLO_OK and 1000 PAGEs), nothing was dropped.
  const answers = await new Promise((resolve, reject) => {
    let buffer = Buffer.from(rest);
    let stream = Buffer.alloc(0);
    let count = 0;
    socket.on('data', (d) => {
      buffer = Buffer.concat([buffer, d]);
      const { frames, rest: left } = serverFrames(buffer);
      buffer = Buffer.from(left);
      for (const f of frames) if (f.opcode === 0x2) stream = Buffer.concat([stream, f.payload]);
      while (stream.length >= 4 && stream.length >= 4 + stream.readUInt32BE(0)) {
        stream = stream.subarray(4 + stream.readUInt32BE(0));
        count++;
      }
      if (count === requests + 1) resolve(count);
    });
    socket.on('close', () => reject(new Error(`closed after ${count} answers`)));
    socket.on('error', () => {});
    socket.resume();
  });
  assert.equal(answers, requests + 1);
  socket.destroy();
  tcp.close();
});
