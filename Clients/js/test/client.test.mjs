// The connection and the reconnecting client against an in-memory server
// (fake-server.mjs): answers split across messages, compressed answers,
// pushes, resume after a dropped connection, keyed patches applied once.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Connection, ChecklistClient, ConnectionLostError, ErrorCode, Feature } from '../checklists.js';
import { FakeServer } from './fake-server.mjs';

/** Resolves when `predicate()` holds, checked after every event of `client` (no timers). */
function until(client, predicate, events = ['change', 'state', 'subscribed', 'resync']) {
  return new Promise((resolve) => {
    if (predicate()) { resolve(); return; }
    const offs = events.map((e) => client.on(e, () => { if (predicate()) { offs.forEach((off) => off()); resolve(); } }));
  });
}

test('a connection says HELLO, creates, lists and pages, with answers cut into 3-byte messages', async () => {
  const server = new FakeServer({ chunk: 3 });
  const c = await Connection.open(server.socket());
  const ok = await c.hello({ clientName: 'test/1.0' });
  assert.equal(ok.serverName, 'fake/1.0');
  assert.equal(server.requests[0].fields.features, Feature.COMPRESSION | Feature.CLIENT_KEYS);
  const list = await c.createList('Groceries', 'Groceries');
  assert.deepEqual(list, { id: 1, name: 'Groceries', icon: 'Groceries', itemCount: 0, uncheckedCount: 0, revision: 1 });
  const patched = await c.patch(1, [{ op: 'INSERT', tempRef: 1, where: 2, text: 'Milk', checked: false, remind: false }]);
  assert.deepEqual(patched, { list: 1, revision: 2, pairs: [{ tempRef: 1, id: 1 }] });
  const page = await c.getPage(1, { offset: 0, limit: 10 });
  assert.equal(page.total, 1);
  assert.equal(page.rows[0].text, 'Milk');
  const pong = await c.ping(new Uint8Array([1, 2, 3]));
  assert.deepEqual([...pong], [1, 2, 3]);
  c.close();
});

test('pipelined requests are matched by id; an ERROR answer rejects with its code', async () => {
  const server = new FakeServer({ chunk: 1000 });
  const c = await Connection.open(server.socket());
  await c.hello();
  const [a, b, missing] = await Promise.allSettled([c.createList('A'), c.createList('B'), c.getPage(99)]);
  assert.equal(a.value.name, 'A');
  assert.equal(b.value.name, 'B');
  assert.equal(missing.reason.code, ErrorCode.NOT_FOUND);
  assert.equal(missing.reason.fromServer, true);
  c.close();
});

test('a LISTS answer of 1024 bytes or more arrives compressed and is inflated', async () => {
  const server = new FakeServer({ chunk: 7 });
  for (let i = 0; i < 60; i++) server.createList(`List number ${i}`, 'Trips');
  const c = await Connection.open(server.socket());
  await c.hello();
  const lists = await c.listLists();
  assert.equal(lists.length, 60);
  assert.equal(lists[59].name, 'List number 59');
  c.close();
});

test('a lost connection fails pending requests with ConnectionLostError', async () => {
  const server = new FakeServer();
  const c = await Connection.open(server.socket());
  await c.hello();
  server.dropBeforeAnswer = (m) => m.message === 'LIST_LISTS';
  await assert.rejects(c.listLists(), ConnectionLostError);
});

test('a keyed patch whose answer was lost is sent again with the same key and applied once', async () => {
  const server = new FakeServer();
  const list = server.createList('Camping');
  const client = new ChecklistClient({ openSocket: () => server.socket(), minDelayMs: 1, maxDelayMs: 2 }).start();
  await client.ready();
  server.dropBeforeAnswer = (m) => m.message === 'PATCH';
  const ok = await client.patch(list.id, [{ op: 'INSERT', where: 2, tempRef: 1, text: 'Tent', checked: false, remind: false }]);
  assert.equal(ok.revision, 2);
  assert.deepEqual(ok.pairs, [{ tempRef: 1, id: 1 }]);
  assert.equal(list.items.length, 1, 'applied once');
  const patches = server.requests.filter((r) => r.message === 'PATCH');
  assert.equal(patches.length, 2, 'sent twice');
  assert.equal(patches[0].fields.client, patches[1].fields.client);
  assert.equal(patches[0].fields.sequence, patches[1].fields.sequence);
  assert.equal(patches[0].fields.sequence, 1);
  client.stop();
});

test('after a dropped connection the client resubscribes from its last revision and misses nothing', async () => {
  const server = new FakeServer();
  const list = server.createList('Chores');
  const client = new ChecklistClient({ openSocket: () => server.socket(), minDelayMs: 1, maxDelayMs: 2 }).start();
  const seen = [];
  client.on('change', (c) => seen.push(c.revision));
  await client.ready();
  await client.subscribeAll();
  assert.equal(client.revisions.get(list.id), 1);
  server.applyPatch({ list: list.id, ops: [{ op: 'INSERT', where: 2, text: 'a', checked: false, remind: false }] });
  await until(client, () => client.revisions.get(list.id) === 2);
  server.dropAll();
  await until(client, () => client.state === 'offline');
  server.applyPatch({ list: list.id, ops: [{ op: 'INSERT', where: 2, text: 'b', checked: false, remind: false }] });
  await until(client, () => client.revisions.get(list.id) === 3);
  assert.deepEqual(seen, [2, 3]);
  const subscribes = server.requests.filter((r) => r.message === 'SUBSCRIBE');
  assert.deepEqual(subscribes[subscribes.length - 1].fields, { scope: 1, lists: [{ list: list.id, revision: 2 }] });
  client.stop();
});

test('a FETCH status is caught up with CHANGES_SINCE', async () => {
  const server = new FakeServer();
  const list = server.createList('Trips');
  const client = new ChecklistClient({ openSocket: () => server.socket(), minDelayMs: 1 }).start();
  await client.ready();
  client.revisions.set(list.id, 1);
  server.applyPatch({ list: list.id, ops: [{ op: 'INSERT', where: 2, text: 'x', checked: false, remind: false }] });
  server.applyPatch({ list: list.id, ops: [{ op: 'TOGGLE', ref: { id: 1 } }] });
  server.subscribeStatus = () => 2;
  const seen = [];
  client.on('change', (c) => seen.push(c.revision));
  await client.subscribeAll();
  await until(client, () => client.revisions.get(list.id) === 3);
  assert.deepEqual(seen, [2, 3]);
  assert.ok(server.requests.some((r) => r.message === 'CHANGES_SINCE' && r.fields.revision === 1));
  client.stop();
});

test('a refused token stops the client with state "refused"', async () => {
  const server = new FakeServer({ token: 'right' });
  const client = new ChecklistClient({ openSocket: () => server.socket(), token: 'wrong', minDelayMs: 1 });
  const refused = until(client, () => client.state === 'refused');
  client.start();
  await refused;
  client.setToken('right');
  await client.ready();
  assert.equal(client.state, 'open');
  client.stop();
});

test('a connection whose PING goes unanswered is replaced', async () => {
  const server = new FakeServer();
  server.answerPings = false;
  const client = new ChecklistClient({ openSocket: () => server.socket(), minDelayMs: 1, maxDelayMs: 2, pingIntervalMs: 5 });
  const states = [];
  client.on('state', (state) => states.push(state));
  const reconnected = until(client, () => states.join(',').includes('open,offline,connecting,open'), ['state']);
  client.start();
  await reconnected;
  assert.ok(server.requests.some((r) => r.message === 'PING'));
  client.stop();
});

test('a request answered RATE_LIMITED is sent again after the retryAfterMs the server asked for, and applied once', async () => {
  const server = new FakeServer();
  const list = server.createList('Camping');
  const waits = [];
  const client = new ChecklistClient({ openSocket: () => server.socket(), minDelayMs: 1, maxDelayMs: 2, rateLimitRetries: 3,
    sleep: async (ms) => { waits.push(ms); } }).start();
  await client.ready();
  const refusals = [250, 40];
  server.rateLimit = (m) => (m.message === 'PATCH' ? refusals.shift() : undefined);
  const ok = await client.patch(list.id, [{ op: 'INSERT', where: 2, tempRef: 1, text: 'Tent', checked: false, remind: false }]);
  assert.equal(ok.revision, 2);
  assert.deepEqual(waits.slice(0, 2), [250, 40], 'waited what the server asked, in order');
  assert.equal(server.requests.filter((r) => r.message === 'PATCH').length, 3);
  assert.equal(list.items.length, 1, 'applied once');
  // Past rateLimitRetries the error reaches the caller, with the wait.
  server.rateLimit = (m) => (m.message === 'LIST_LISTS' ? 10 : undefined);
  await assert.rejects(client.listLists(), (e) => e.code === ErrorCode.RATE_LIMITED && e.retryAfterMs === 10);
  assert.equal(server.requests.filter((r) => r.message === 'LIST_LISTS').length, 4);
  client.stop();
});
