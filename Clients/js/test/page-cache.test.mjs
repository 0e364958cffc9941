// The web app's page cache (Clients/web/page-cache.js) without a browser:
// reads go first to the rows in view, then ahead in the scroll direction as
// far as the speed reaches; never more than maxInFlight at once; never more
// than maxBlocks pages held. Reads are answered by hand and time is given
// explicitly (no timers).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PageCache } from '../../web/page-cache.js';

const TOTAL = 1_000_000;

/** A cache whose reads wait until `answer` is called; `reads` lists the offsets asked, in order. */
function harness(options = {}) {
  const reads = [];
  const waiting = new Map(); // offset -> resolve
  let clock = 0;
  const cache = new PageCache((offset, limit) => {
    reads.push(offset);
    return new Promise((resolve) => waiting.set(offset, () => resolve({
      total: TOTAL, revision: 1,
      rows: Array.from({ length: Math.min(limit, TOTAL - offset) }, (_, i) => ({ id: offset + i + 1, text: `Item ${offset + i}` })),
    })));
  }, { blockRows: 100, marginRows: 100, lookaheadMs: 500, maxAheadRows: 3000, maxInFlight: 4, maxBlocks: 40, now: () => clock, ...options });
  cache.total = TOTAL;
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return {
    cache, reads, waiting,
    tick(ms) { clock += ms; return clock; },
    /** Answers every read in flight (and those they start), `rounds` times. */
    async answerAll(rounds = 1) {
      for (let r = 0; r < rounds; r++) {
        const now = [...waiting.values()];
        waiting.clear();
        for (const resolve of now) resolve();
        await settle();
      }
    },
  };
}

test('at rest the pages in view are read first, then a margin on both sides, at most maxInFlight at once', async () => {
  const h = harness();
  h.cache.moveTo(5000, 16, h.tick(0));
  h.cache.pump();
  assert.deepEqual(h.reads, [5000, 5100, 4900]);
  assert.ok(h.cache.loading.size <= 4);
  await h.answerAll(3);
  assert.equal(h.reads.length, 3, 'nothing more than the margin is read at rest');
  assert.equal(h.cache.item(5000).text, 'Item 5000');
  assert.equal(h.cache.item(4950).text, 'Item 4950');
  assert.equal(h.cache.item(4899), undefined);
});

test('scrolling down reads ahead as far as the speed reaches, nearest first, bounded in flight', async () => {
  const h = harness();
  h.cache.moveTo(0, 16, h.tick(0));
  h.cache.pump();
  await h.answerAll(2);
  // 10 rows per ms (10,000 rows/s), one frame at a time.
  let first = 0;
  for (let frame = 0; frame < 30; frame++) {
    first += 167;
    h.cache.moveTo(first, 16, h.tick(16.7));
    const before = h.reads.length;
    h.cache.pump();
    assert.ok(h.cache.loading.size <= 4, `at most 4 reads in flight (frame ${frame})`);
    for (const offset of h.reads.slice(before)) assert.ok(offset >= Math.floor(first / 100) * 100 - 100, `read ${offset} is not behind the view at ${first}`);
    await h.answerAll(1);
  }
  // The lookahead (500 ms at 10 rows/ms, capped at 3000 rows) is read: the rows 3000 ahead are here.
  await h.answerAll(40);
  assert.ok(h.cache.item(first + 2900), 'the page 2,900 rows ahead was read');
  assert.equal(h.cache.item(first + 3200), undefined, 'nothing past the lookahead is read');
  assert.ok(h.cache.blocks.size <= 40, `${h.cache.blocks.size} pages held (at most 40)`);
  for (let i = first; i < first + 16; i++) assert.ok(h.cache.item(i), `row ${i} in view is held`);
});

test('scrolling up reads ahead upwards', async () => {
  const h = harness();
  h.cache.moveTo(500_000, 16, h.tick(0));
  h.cache.pump();
  await h.answerAll(2);
  h.reads.length = 0;
  h.cache.moveTo(499_833, 16, h.tick(16.7));
  h.cache.pump();
  assert.deepEqual(h.reads, [499_800, 499_700, 499_600, 499_500], 'the page in view, then those above it, nearest first');
});

test('after the scrolling pauses only the view and its margins are read', async () => {
  const h = harness();
  h.cache.moveTo(0, 16, h.tick(0));
  h.cache.moveTo(167, 16, h.tick(16.7));
  assert.ok(h.cache.scrolling);
  h.tick(1000);
  assert.ok(!h.cache.scrolling);
  h.cache.pump();
  await h.answerAll(5);
  assert.deepEqual([...h.reads].sort((a, b) => a - b), [0, 100, 200], 'the view (167..<183) and 100 rows each side (67..<283)');
});

test('a jump farther than the lookahead reads where it lands, not ahead of it', async () => {
  const h = harness();
  h.cache.moveTo(0, 16, h.tick(0));
  h.cache.moveTo(700_000, 16, h.tick(16.7));
  h.cache.pump();
  await h.answerAll(5);
  assert.deepEqual([...h.reads].sort((a, b) => a - b), [699_900, 700_000, 700_100]);
});

test('held pages stay within maxBlocks, those farthest from the view dropped first', async () => {
  const h = harness({ maxBlocks: 40 });
  for (let first = 0; first < 20_000; first += 500) {
    h.cache.moveTo(first, 16, h.tick(1000)); // at rest at each stop
    h.cache.pump();
    await h.answerAll(3);
    assert.ok(h.cache.blocks.size <= 40, `${h.cache.blocks.size} pages held at ${first}`);
  }
  assert.ok(h.cache.item(19_500), 'the rows in view are held');
  assert.equal(h.cache.item(0), undefined, 'the first pages were dropped');
});

test('refresh reads the pages in view again and keeps showing the old ones meanwhile', async () => {
  const h = harness();
  h.cache.moveTo(0, 16, h.tick(0));
  h.cache.pump();
  await h.answerAll(2);
  h.reads.length = 0;
  h.cache.refresh();
  h.cache.pump();
  assert.deepEqual(h.reads, [0, 100]);
  assert.equal(h.cache.item(5).text, 'Item 5', 'the stale page is still shown');
  await h.answerAll(1);
  h.reads.length = 0;
  h.cache.pump();
  assert.deepEqual(h.reads, [], 'current pages are not read again');
});

test('a failed read is not retried in a loop: the next pump asks again', async () => {
  let calls = 0;
  const cache = new PageCache(() => { calls += 1; return Promise.reject(new Error('down')); },
    { blockRows: 100, marginRows: 0, maxInFlight: 4, onError: () => {}, now: () => 0 });
  cache.total = 1000;
  cache.moveTo(0, 16, 0);
  cache.pump();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(calls, 1);
  cache.pump();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(calls, 2);
});
