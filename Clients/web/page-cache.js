// The rows of one list held as pages of `blockRows` rows, read with GET_PAGE
// as the list view asks for them: which pages to read next (the rows in view
// first, then ahead in the direction of the scroll, as far as the scroll
// speed reaches in `lookaheadMs`, then a margin behind), at most
// `maxInFlight` requests at once and at most `maxBlocks` pages kept (those
// farthest from the view are dropped first). No DOM: the view tells it which
// rows it shows and when, so it can be tested without a browser.

/** A pause in the scrolling longer than this ends the read-ahead. */
const IDLE_MS = 200;
/** Moves are timed over at most this (the first move after a pause counts as one frame's). */
const MAX_STEP_MS = 50;
/** Half-life of the smoothed scroll speed. */
const HALF_LIFE_MS = 60;

export class PageCache {
  /**
   * `read(offset, limit)`: resolves to a PAGE (`{total, revision, rows}`).
   * `onPage(block, page)`: a page arrived (after it is stored).
   * `onError(block, error)`: a read failed (it is read again at the next `pump`).
   * `now()`: the clock of the times given to `moveTo` (tests pass their own).
   */
  constructor(read, {
    blockRows = 200, marginRows = 200, lookaheadMs = 500, maxAheadRows = 6000,
    maxInFlight = 6, maxBlocks = 64, onPage = () => {}, onError = () => {},
    now = () => performance.now(),
  } = {}) {
    this.read = read;
    this.blockRows = blockRows;
    this.marginRows = marginRows;
    this.lookaheadMs = lookaheadMs;
    this.maxAheadRows = maxAheadRows;
    this.maxInFlight = maxInFlight;
    this.maxBlocks = Math.max(maxBlocks, Math.ceil((maxAheadRows + marginRows) / blockRows) + 4);
    this.onPage = onPage;
    this.onError = onError;
    this.now = now;
    /** Block index -> `{rows, generation}` (generation -1: from the page's storage, stale). */
    this.blocks = new Map();
    /** Blocks being read. */
    this.loading = new Set();
    /** Pages read since the last `refresh` belong to this generation; older ones are read again. */
    this.generation = 0;
    this.total = 0;
    this.revision = 0;
    this.closed = false;
    // Where the view is and how it moves (rows per ms, signed).
    this.first = 0;
    this.rows = 1;
    this.at = 0;
    this.movedAt = -Infinity;
    this.velocity = 0;
    this.instant = 0;
    this.direction = 1;
  }

  close() { this.closed = true; }

  /** The item at `index`, or undefined while its page is not here. */
  item(index) {
    const block = this.blocks.get(Math.floor(index / this.blockRows));
    return block?.rows[index % this.blockRows];
  }

  /** Keeps pages from elsewhere (the page's storage) until they are read again. */
  seed(total, blocks) {
    this.total = total;
    for (const [b, rows] of blocks) this.blocks.set(b, { rows, generation: -1 });
  }

  /** Current (not stale) pages near the view, for the page's storage. */
  current(count) {
    const center = Math.floor(this.first / this.blockRows);
    const out = [];
    for (const [b, block] of this.blocks) {
      if (out.length < count && Math.abs(b - center) <= 1 && block.generation === this.generation) out.push([b, block.rows]);
    }
    return out;
  }

  /** True while the view moved within the last IDLE_MS. */
  get scrolling() { return this.now() - this.movedAt < IDLE_MS; }

  /**
   * The view shows rows `first ..< first + rows` at `time` (ms, the clock of
   * `now`). A move farther than the read-ahead (a jump, a scrub) sets no speed.
   */
  moveTo(first, rows, time = this.now()) {
    const delta = first - this.first;
    if (delta !== 0) {
      const step = Math.min(Math.max(time - this.at, 1), MAX_STEP_MS);
      if (Math.abs(delta) > this.maxAheadRows) {
        this.velocity = 0;
        this.instant = 0;
      } else {
        this.instant = delta / step;
        this.velocity += (1 - 2 ** (-step / HALF_LIFE_MS)) * (this.instant - this.velocity);
      }
      this.direction = delta > 0 ? 1 : -1;
      this.movedAt = time;
    }
    this.first = first;
    this.rows = rows;
    this.at = time;
  }

  /** Rows wanted ahead of the view in the scroll direction. */
  #ahead() {
    if (!this.scrolling) return this.marginRows;
    const speed = Math.max(Math.abs(this.velocity), Math.abs(this.instant));
    return Math.min(this.maxAheadRows, Math.max(this.marginRows, Math.ceil(speed * this.lookaheadMs)));
  }

  /** The first and last block wanted (the view, ahead, and the margin behind). */
  #window() {
    const ahead = this.#ahead();
    const from = this.first - (this.direction < 0 ? ahead : this.marginRows);
    const to = this.first + this.rows + (this.direction > 0 ? ahead : this.marginRows);
    return [Math.floor(Math.max(0, from) / this.blockRows), Math.floor(Math.max(0, to - 1) / this.blockRows)];
  }

  /**
   * Starts reads of the pages wanted, nearest the view first in the scroll
   * direction, while fewer than `maxInFlight` are in flight.
   */
  pump() {
    if (this.closed) return;
    const B = this.blockRows;
    const firstBlock = Math.floor(this.first / B);
    const lastBlock = Math.floor((this.first + this.rows - 1) / B);
    const ahead = this.#ahead();
    // The rows in view, then ahead, then behind.
    for (let b = firstBlock; b <= lastBlock; b++) if (!this.#want(b)) return;
    const end = this.first + this.rows;
    if (this.direction > 0) {
      if (this.#wantAfter(lastBlock, end + ahead)) this.#wantBefore(firstBlock, this.first - this.marginRows);
    } else if (this.#wantBefore(firstBlock, this.first - ahead)) {
      this.#wantAfter(lastBlock, end + this.marginRows);
    }
  }

  /** Wants the blocks after `lastBlock` up to row `to`, nearest first; false when no more reads may start now. */
  #wantAfter(lastBlock, to) {
    for (let b = lastBlock + 1; b * this.blockRows < to; b++) if (!this.#want(b)) return false;
    return true;
  }

  /** Wants the blocks before `firstBlock` down to row `from`, nearest first; false when no more reads may start now. */
  #wantBefore(firstBlock, from) {
    for (let b = firstBlock - 1; b >= 0 && (b + 1) * this.blockRows > from; b--) if (!this.#want(b)) return false;
    return true;
  }

  /** Reads block `b` if it is missing or stale; false when no more reads may start now. */
  #want(b) {
    if (b < 0 || b * this.blockRows >= this.total) return true;
    const block = this.blocks.get(b);
    if ((block && block.generation === this.generation) || this.loading.has(b)) return true;
    if (this.loading.size >= this.maxInFlight) return false;
    this.load(b);
    return true;
  }

  /** Reads block `b` (whatever is held); resolves once it is stored or the read failed. */
  async load(b) {
    const generation = this.generation;
    this.loading.add(b);
    let page = null;
    try {
      page = await this.read(b * this.blockRows, this.blockRows);
    } catch (error) {
      if (!this.closed) this.onError(b, error);
    } finally {
      this.loading.delete(b);
    }
    // After a failure the view asks again at its next frame (no loop of failing reads).
    if (this.closed || !page) return;
    this.total = page.total;
    this.revision = Math.max(this.revision, page.revision);
    this.blocks.set(b, { rows: page.rows, generation });
    this.#evict();
    this.onPage(b, page);
    this.pump();
  }

  /** Drops the pages farthest outside the wanted window while more than `maxBlocks` are held. */
  #evict() {
    if (this.blocks.size <= this.maxBlocks) return;
    const [lo, hi] = this.#window();
    while (this.blocks.size > this.maxBlocks) {
      let worst = -1;
      let worstDistance = 0;
      for (const b of this.blocks.keys()) {
        const distance = b < lo ? lo - b : b > hi ? b - hi : 0;
        if (distance > worstDistance) { worst = b; worstDistance = distance; }
      }
      if (worst < 0) return; // all wanted (maxBlocks covers the window, so this does not happen)
      this.blocks.delete(worst);
    }
  }

  /** Marks every page stale: they stay shown and are read again as they are wanted. */
  refresh() { this.generation += 1; }

  /** Applies `apply` to the held item `id` (a change of its fields). */
  updateItem(id, apply) {
    for (const block of this.blocks.values()) {
      const item = block.rows.find((r) => r.id === id);
      if (item) apply(item);
    }
  }
}
