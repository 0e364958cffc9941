// One list, as the app's table view shows it: a fixed pool of row elements
// rebound to items as they scroll in and out (cell reuse), pages read around
// the viewport and ahead of the scroll (page-cache.js), and a spacer as tall
// as the whole list so that the scrollbar shows where the viewport is. Lists
// too tall for the browser's largest element are scrolled through a scaled
// spacer.
//
// Per frame the view reads the scroll position once, then only writes: one
// transform moves the pool, each row element that shows another row gets its
// texts (in text nodes it keeps); nothing reads layout after a write, and
// the scroll handler only asks for a frame.

import { PageCache } from './page-cache.js';

export const ROW_HEIGHT = 44;
const BLOCK = 200;            // rows per GET_PAGE
const MARGIN_ROWS = 200;      // rows read beyond each side of the viewport at rest
const LOOKAHEAD_MS = 500;     // while scrolling, rows read ahead: as far as the speed reaches in this time
const MAX_AHEAD_ROWS = 6000;  // at most this far ahead (a jump farther is not a scroll)
const MAX_IN_FLIGHT = 6;      // GET_PAGE requests at once
const MAX_BLOCKS = 64;        // pages kept (12,800 rows)
const MAX_SPACER_PX = 8_000_000;
const CACHE_KEY = 'checklists.rows';   // the rows last in view, for a reload while offline
const CACHE_BLOCKS = 3;

function readCache(listId) {
  try {
    const cached = JSON.parse(localStorage.getItem(CACHE_KEY) ?? 'null');
    return cached?.list === listId ? cached : null;
  } catch {
    return null;
  }
}

let dueFormat = null;
/** A due date (seconds since 1970) as the page shows it. */
function formatDue(seconds) {
  dueFormat ??= new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' });
  return dueFormat.format(seconds * 1000);
}
/** A price in cents. */
function formatPrice(cents) {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** Sets a kept text node's text when it differs. */
function setText(node, text) {
  if (node.data !== text) node.data = text;
}

const ROW_HTML = '<button type="button" class="check" data-role="check" aria-label="Check"></button>'
  + '<span class="text" data-role="text"></span><span class="due" data-role="due"></span>'
  + '<span class="price" data-role="price"></span><span class="tools">'
  + '<button type="button" data-role="up" title="Move up">↑</button>'
  + '<button type="button" data-role="down" title="Move down">↓</button>'
  + '<button type="button" data-role="edit" title="Edit">Edit</button>'
  + '<button type="button" data-role="delete" title="Delete">✕</button></span>';

/** A row element of the pool, with the text nodes it rebinds and what it shows. */
function makeRow(k) {
  const row = document.createElement('div');
  row.className = 'row';
  row.innerHTML = ROW_HTML;
  row.style.transform = `translateY(${k * ROW_HEIGHT}px)`;
  const [check, text, due, price] = row.children;
  const node = (parent) => parent.appendChild(document.createTextNode(''));
  row.parts = { check, text: node(text), due: node(due), price: node(price), mark: node(check) };
  row.bound = { index: -1, item: undefined, version: -1, itemId: '', checked: '', pending: false, loading: false, deleted: false };
  return row;
}

export class ListView {
  /**
   * `container`: the scrolling element (`data-role="rows"`). `client`: a
   * ChecklistClient. `pending(itemId)`: the changes queued for an item, as
   * `{checked?, text?, deleted?}` or undefined. `actions`: callbacks
   * `check(item, index)`, `edit(item, index)`, `remove(item, index)`, `move(item, index, toIndex)`.
   */
  constructor(container, client, listId, { pending = () => undefined, actions = {}, onTotal = () => {} } = {}) {
    this.container = container;
    this.client = client;
    this.listId = listId;
    this.pending = pending;
    this.actions = actions;
    this.onTotal = onTotal;
    this.pages = new PageCache((offset, limit) => this.client.getPage(this.listId, { offset, limit }), {
      blockRows: BLOCK, marginRows: MARGIN_ROWS, lookaheadMs: LOOKAHEAD_MS, maxAheadRows: MAX_AHEAD_ROWS,
      maxInFlight: MAX_IN_FLIGHT, maxBlocks: MAX_BLOCKS,
      onPage: (b, page) => this.#arrived(b, page),
      onError: (b, error) => { console.warn('page', b, error); this.#schedule(); },
    });
    this.pool = [];
    this.rowsBoundTotal = 0; // for benchmarks: how many times a row element was rebound
    this.closed = false;
    /** Bumped when shown items or their pending changes change: every row is bound again. */
    this.version = 0;
    this.viewHeight = container.clientHeight;
    this.spacerHeight = -1;
    this.first = 0;
    this.poolTop = NaN;
    this.shownTotal = -1;
    this.frame = 0;

    container.textContent = '';
    this.spacer = document.createElement('div');
    this.spacer.className = 'spacer';
    this.poolElement = document.createElement('div');
    this.poolElement.className = 'pool';
    this.spacer.append(this.poolElement);
    container.append(this.spacer);
    this.onScroll = () => this.#schedule();
    container.addEventListener('scroll', this.onScroll, { passive: true });
    // Layout is current when a ResizeObserver is called: reading the height there costs nothing.
    this.resizeObserver = new ResizeObserver(() => {
      this.viewHeight = container.clientHeight;
      this.#sizePool();
      this.#schedule();
    });
    this.resizeObserver.observe(container);
    container.addEventListener('click', (event) => this.#click(event));
    this.renderFrame = (time) => { this.frame = 0; this.#render(time); };
    this.#sizePool();
    // Rows this page showed last time (stale: read again as soon as connected).
    const cached = readCache(listId);
    if (cached) {
      this.pages.seed(cached.total, cached.blocks);
      this.#schedule();
    }
  }

  get total() { return this.pages.total; }
  get revision() { return this.pages.revision; }

  /** A page arrived: rows in the pool show it at the next frame. */
  #arrived(b, page) {
    if (page.total !== this.shownTotal) { this.shownTotal = page.total; this.onTotal(page.total); this.#schedule(); }
    const from = b * BLOCK;
    if (from < this.first + this.pool.length && from + BLOCK > this.first) this.#schedule();
    this.#saveCache();
  }

  /** Keeps the pages around the viewport in the page's storage (once the scrolling pauses). */
  #saveCache() {
    if (this.cacheTimer) return;
    this.cacheTimer = setTimeout(() => {
      this.cacheTimer = 0;
      if (this.closed) return;
      if (this.pages.scrolling) { this.#saveCache(); return; }
      try {
        localStorage.setItem(CACHE_KEY, JSON.stringify({ list: this.listId, total: this.total, blocks: this.pages.current(CACHE_BLOCKS) }));
      } catch { /* storage full: the cache is only a convenience */ }
    }, 300);
  }

  close() {
    this.closed = true;
    this.pages.close();
    if (this.frame) cancelAnimationFrame(this.frame);
    this.container.removeEventListener('scroll', this.onScroll);
    this.resizeObserver.disconnect();
  }

  /** Reads the first page (and the total). */
  async start() {
    await this.pages.load(0);
    this.#schedule();
  }

  // ---- geometry ----------------------------------------------------------

  #sizePool() {
    const visible = Math.max(1, Math.ceil(this.viewHeight / ROW_HEIGHT));
    const wanted = visible + 2;
    while (this.pool.length < wanted) {
      const row = makeRow(this.pool.length);
      this.poolElement.append(row);
      this.pool.push(row);
    }
    while (this.pool.length > wanted) this.pool.pop().remove();
    this.poolElement.style.height = `${wanted * ROW_HEIGHT}px`;
  }

  #spacerHeight() { return Math.min(this.total * ROW_HEIGHT, MAX_SPACER_PX); }

  /** Scrolls so that row `index` is at the top. */
  scrollToIndex(index) {
    const contentHeight = this.total * ROW_HEIGHT;
    const spacerHeight = this.#spacerHeight();
    const viewHeight = this.viewHeight;
    if (contentHeight <= spacerHeight) this.container.scrollTop = index * ROW_HEIGHT;
    else this.container.scrollTop = (index * ROW_HEIGHT) / Math.max(1, contentHeight - viewHeight) * (spacerHeight - viewHeight);
  }

  #schedule() {
    if (this.frame || this.closed) return;
    this.frame = requestAnimationFrame(this.renderFrame);
  }

  // ---- rows ------------------------------------------------------------

  #render(time) {
    if (this.closed) return;
    // Reads first (the scroll position; the height is kept from the ResizeObserver) ...
    const scrollTop = this.container.scrollTop;
    const viewHeight = this.viewHeight;
    const contentHeight = this.total * ROW_HEIGHT;
    const spacerHeight = this.#spacerHeight();
    let virtualTop = scrollTop;
    if (contentHeight > spacerHeight) {
      const maxScroll = Math.max(1, spacerHeight - viewHeight);
      virtualTop = Math.min(1, scrollTop / maxScroll) * Math.max(0, contentHeight - viewHeight);
    }
    const first = Math.floor(virtualTop / ROW_HEIGHT);
    const top = scrollTop - (virtualTop - first * ROW_HEIGHT);
    this.first = first;
    this.pages.moveTo(first, this.pool.length, time);
    // ... then writes only.
    if (spacerHeight !== this.spacerHeight) {
      this.spacerHeight = spacerHeight;
      this.spacer.style.height = `${spacerHeight}px`;
    }
    if (top !== this.poolTop) {
      this.poolTop = top;
      this.poolElement.style.transform = `translateY(${top}px)`;
    }
    for (let k = 0; k < this.pool.length; k++) this.#bind(this.pool[k], first + k);
    this.pages.pump();
  }

  #bind(row, index) {
    const bound = row.bound;
    if (index >= this.total) {
      if (!row.hidden) { row.hidden = true; row.removeAttribute('data-item-id'); bound.itemId = ''; bound.index = -1; }
      return;
    }
    if (row.hidden) row.hidden = false;
    const item = this.pages.item(index);
    if (bound.index === index && bound.item === item && bound.version === this.version) return;
    bound.item = item;
    bound.version = this.version;
    if (bound.index !== index) {
      bound.index = index;
      row.dataset.index = index;
    }
    this.rowsBoundTotal += 1;
    const parts = row.parts;
    if (!item) {
      if (bound.itemId !== '') { row.removeAttribute('data-item-id'); row.removeAttribute('data-checked'); bound.itemId = ''; bound.checked = ''; }
      if (bound.pending) { row.removeAttribute('data-pending'); bound.pending = false; }
      if (!bound.loading) { row.classList.add('loading'); bound.loading = true; }
      if (bound.deleted) { row.classList.remove('deleted'); bound.deleted = false; }
      setText(parts.mark, '');
      setText(parts.text, 'Loading…');
      setText(parts.due, '');
      setText(parts.price, '');
      return;
    }
    if (bound.loading) { row.classList.remove('loading'); bound.loading = false; }
    const pending = this.pending(item.id);
    const checked = (pending?.checked ?? item.checked) ? 'true' : 'false';
    if (bound.itemId !== item.id) { row.dataset.itemId = item.id; bound.itemId = item.id; }
    if (bound.checked !== checked) {
      row.dataset.checked = checked;
      parts.check.setAttribute('aria-pressed', checked);
      bound.checked = checked;
    }
    if (Boolean(pending) !== bound.pending) {
      if (pending) row.dataset.pending = 'true'; else row.removeAttribute('data-pending');
      bound.pending = Boolean(pending);
    }
    if (Boolean(pending?.deleted) !== bound.deleted) {
      bound.deleted = Boolean(pending?.deleted);
      row.classList.toggle('deleted', bound.deleted);
    }
    setText(parts.mark, checked === 'true' ? '✓' : '');
    setText(parts.text, pending?.text ?? item.text);
    setText(parts.due, item.due !== undefined ? `${item.remind ? '⏰ ' : ''}${formatDue(item.due)}` : item.remind ? '⏰ ' : '');
    setText(parts.price, item.price !== undefined ? formatPrice(item.price) : '');
  }

  #click(event) {
    const button = event.target.closest('button[data-role]');
    const row = event.target.closest('.row');
    if (!button || !row || row.dataset.itemId === undefined) return;
    const index = Number(row.dataset.index);
    const item = this.pages.item(index);
    if (!item) return;
    const role = button.dataset.role;
    if (role === 'check') this.actions.check?.(item, index);
    else if (role === 'edit') this.actions.edit?.(item, index);
    else if (role === 'delete') this.actions.remove?.(item, index);
    else if (role === 'up' && index > 0) this.actions.move?.(item, index, index - 1);
    else if (role === 'down' && index + 1 < this.total) this.actions.move?.(item, index, index + 1);
  }

  // ---- changes ---------------------------------------------------------

  /** Rows change in place (no row moves): apply to the held items; every row is bound again. */
  #updateItem(id, apply) {
    this.pages.updateItem(id, apply);
    this.version += 1;
  }

  /**
   * A committed change of this list (a CHANGE push or CHANGES element).
   * Changes of fields are applied to the held rows; inserts, deletes and
   * moves shift rows, so the held pages are read again (kept on screen
   * until the new ones arrive).
   */
  applyChange(change) {
    if (change.kind === 5) { this.refresh(); return; }
    if (change.kind !== 4) return;
    let structural = false;
    for (const op of change.ops) {
      switch (op.op) {
        case 'SET_TEXT': this.#updateItem(op.id, (i) => { i.text = op.text; }); break;
        case 'SET_CHECKED': this.#updateItem(op.id, (i) => { i.checked = op.checked; }); break;
        case 'SET_REMIND': this.#updateItem(op.id, (i) => { i.remind = op.remind; }); break;
        case 'SET_DUE': this.#updateItem(op.id, (i) => { if (op.present) i.due = op.due; else delete i.due; }); break;
        case 'SET_PRICE': this.#updateItem(op.id, (i) => { if (op.present) i.price = op.price; else delete i.price; }); break;
        case 'INSERT': this.pages.total += 1; structural = true; break;
        case 'DELETE': this.pages.total -= 1; structural = true; break;
        case 'MOVE': structural = true; break;
        default: break;
      }
    }
    this.pages.revision = Math.max(this.pages.revision, change.revision);
    if (structural) { this.shownTotal = this.total; this.onTotal(this.total); this.refresh(); } else this.#schedule();
  }

  /** Shows a local change at once (the server's answer or push confirms it). */
  applyLocal(id, apply) {
    this.#updateItem(id, apply);
    this.#schedule();
  }

  /** Reads every page in view again. */
  refresh() {
    this.pages.refresh();
    this.#schedule();
  }

  /** Rebinds the rows (e.g. when pending changes changed). */
  redraw() {
    this.version += 1;
    this.#schedule();
  }
}
