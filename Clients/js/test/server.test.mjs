// The JavaScript client against a real checklistd, over TCP (the same byte
// stream a WebSocket carries). Runs when CHECKLISTD names the binary (the
// Swift test JavaScriptClientTests sets it); skipped otherwise.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Connection, ChecklistClient, FrameParser, Feature, ErrorCode, MessageType } from '../checklists.js';
import { tcpSocket } from './tcp-socket.mjs';

const binary = process.env.CHECKLISTD;
const skip = binary ? false : 'CHECKLISTD is not set: the tests against a real checklistd are skipped';
let server;
let port;
let dataDir;

before(async () => {
  if (skip) return;
  dataDir = mkdtempSync(join(tmpdir(), 'checklists-js-'));
  server = spawn(binary, ['--port', '0', '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'ignore'] });
  const lines = createInterface({ input: server.stdout });
  port = await new Promise((resolve, reject) => {
    server.on('exit', (code) => reject(new Error(`checklistd exited with ${code}`)));
    lines.on('line', (line) => {
      const match = /listening on .*:(\d+)$/.exec(line);
      if (match) resolve(Number(match[1]));
    });
  });
});

after(() => {
  if (skip) return;
  server.kill('SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });
});

/** A connection whose received bytes are also parsed into `frames` (to see their flags). */
async function open() {
  const socket = tcpSocket('127.0.0.1', port);
  const parser = new FrameParser();
  const frames = [];
  socket.addEventListener('message', (event) => {
    parser.push(event.data);
    for (let f = parser.next(); f; f = parser.next()) frames.push(f);
  });
  const c = await Connection.open(socket);
  const ok = await c.hello({ clientName: 'checklists-js-test/1.0' });
  return { c, ok, frames };
}

test('HELLO announces both features; a large LISTS arrives compressed and is inflated', { skip }, async () => {
  const { c, ok, frames } = await open();
  assert.equal(ok.features & (Feature.COMPRESSION | Feature.CLIENT_KEYS), 3);
  for (let i = 0; i < 40; i++) await c.createList(`A list with a long enough name, number ${i}`, 'Folder');
  const lists = await c.listLists();
  assert.ok(lists.length >= 40);
  const listsFrame = frames.find((f) => f.type === MessageType.LISTS);
  assert.equal(listsFrame.flags, 1, 'LISTS of 1024 bytes or more is compressed');
  c.close();
});

test('pages by offset, by anchor and by client key', { skip }, async () => {
  const { c } = await open();
  const list = await c.createList('Pages');
  const ops = [];
  for (let i = 0; i < 300; i++) ops.push({ op: 'INSERT', where: 2, text: `Row ${i}`, checked: i % 2 === 0, remind: false, clientKey: `key-${i}` });
  await c.patch(list.id, ops);
  const byOffset = await c.getPage(list.id, { offset: 100, limit: 5 });
  assert.equal(byOffset.total, 300);
  assert.deepEqual(byOffset.rows.map((r) => r.text), ['Row 100', 'Row 101', 'Row 102', 'Row 103', 'Row 104']);
  assert.equal(byOffset.rows[0].clientKey, 'key-100');
  const byAnchor = await c.getPage(list.id, { anchor: byOffset.rows[2].id, limit: 1 });
  assert.equal(byAnchor.offset, 102);
  const byKey = await c.getPage(list.id, { key: 'key-250', limit: 2, filter: 0 });
  assert.equal(byKey.offset, 250);
  assert.equal(byKey.rows[0].text, 'Row 250');
  c.close();
});

test('a keyed PATCH sent again on another connection is applied once and answered alike', { skip }, async () => {
  const a = await open();
  const b = await open();
  const list = await a.c.createList('Keys');
  const key = { client: 0xfedcba9876543210n, sequence: 7 };
  const ops = [{ op: 'INSERT', where: 2, tempRef: 1, text: 'Once', checked: false, remind: false }];
  const first = await a.c.patch(list.id, ops, key);
  const again = await b.c.patch(list.id, ops, key);
  assert.deepEqual(again, first);
  const page = await a.c.getPage(list.id, { limit: 10 });
  assert.equal(page.total, 1);
  a.c.close();
  b.c.close();
});

test('STATS with usage reports the namespace\'s counts, which follow a create and a patch; without it, none', { skip }, async () => {
  const { c } = await open();
  assert.equal((await c.stats()).usageLists, undefined);
  const before = await c.stats({ usage: true });
  const list = await c.createList('Usage', 'Folder');  // 11 bytes
  await c.patch(list.id, [{ op: 'INSERT', where: 2, tempRef: 1, text: 'Milk', checked: false, remind: false }]);
  const after = await c.stats({ usage: true });
  assert.equal(Number(after.usageLists) - Number(before.usageLists), 1);
  assert.equal(Number(after.usageItems) - Number(before.usageItems), 1);
  assert.equal(Number(after.usageBytes) - Number(before.usageBytes), 15);
  assert.equal(after.quotaLists, undefined);  // this server sets no quota
  c.close();
});

test('a subscriber gets the CHANGE push; CHANGES_SINCE returns the same change; errors carry their code', { skip }, async () => {
  const a = await open();
  const b = await open();
  const list = await a.c.createList('Live');
  const pushed = new Promise((resolve) => { a.c.onPush = (m) => { if (m.message === 'CHANGE' && m.fields.list === list.id) resolve(m.fields); }; });
  const entries = await a.c.subscribe({ scope: 0, lists: [{ list: list.id }] });
  assert.deepEqual(entries, [{ list: list.id, revision: 1, status: 0 }]);
  await b.c.patch(list.id, [{ op: 'INSERT', where: 2, text: 'Milk', checked: false, remind: false }]);
  const change = await pushed;
  assert.equal(change.kind, 4);
  assert.equal(change.ops[0].text, 'Milk');
  const since = await a.c.changesSince(list.id, 1);
  assert.deepEqual(since.changes, [change]);
  await assert.rejects(a.c.changesSince(list.id, 99), (e) => e.code === ErrorCode.RESYNC_REQUIRED && e.revision === 2);
  await assert.rejects(a.c.getPage(987654), (e) => e.code === ErrorCode.NOT_FOUND && e.fromServer);
  a.c.close();
  b.c.close();
});

test('the reconnecting client resumes from its last revision and sees every change once', { skip }, async () => {
  const writer = await open();
  const list = await writer.c.createList('Resume');
  const client = new ChecklistClient({ openSocket: () => tcpSocket('127.0.0.1', port), minDelayMs: 5, maxDelayMs: 20 }).start();
  await client.ready();
  const seen = [];
  const allSeen = new Promise((resolve) => client.on('change', (ch) => {
    if (ch.list !== list.id) return;
    seen.push(ch.revision);
    if (ch.revision === 4) resolve();
  }));
  client.revisions.set(list.id, 1);
  await client.subscribeAll();
  await writer.c.patch(list.id, [{ op: 'INSERT', where: 2, text: 'a', checked: false, remind: false }]);
  await client.withConnection(async (c) => c.close());
  await writer.c.patch(list.id, [{ op: 'INSERT', where: 2, text: 'b', checked: false, remind: false }]);
  await writer.c.patch(list.id, [{ op: 'INSERT', where: 2, text: 'c', checked: false, remind: false }]);
  await allSeen;
  assert.deepEqual(seen, [2, 3, 4]);
  client.stop();
  writer.c.close();
});
