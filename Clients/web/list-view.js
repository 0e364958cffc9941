// One list, as the app's table view shows it: a fixed pool of row elements
// rebound to items as they scroll in and out (cell reuse), pages fetched
// around the viewport, and a spacer as tall as the whole list so that the
// scrollbar shows where the viewport is. Lists too tall for the browser's
// largest element are scrolled through a scaled spacer.

export const ROW_HEIGHT = 44;
const BLOCK = 100;            // rows per GET_PAGE
const MARGIN_ROWS = 50;       // rows fetched beyond each side of the viewport
const MAX_BLOCKS = 200;       // blocks kept in memory (20,000 rows)
const MAX_IN_FLIGHT = 4;      // GET_PAGE requests at once
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

/** A due date (seconds since 1970) as the page shows it. */
function formatDue(seconds) {
  return new Date(seconds * 1000).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' });
}
/** A price in cents. */
function formatPrice(cents) {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
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
    this.total = 0;
    this.revision = 0;
    this.blocks = new Map(); // block index -> {rows, generation}
    this.loading = new Set();
    this.generation = 0;
    this.pool = [];
    this.rowsBoundTotal = 0; // for benchmarks: how many times a row element was rebound
    this.closed = false;

    container.textContent = '';
    this.spacer = document.createElement('div');
    this.spacer.className = 'spacer';
    container.append(this.spacer);
    this.onScroll = () => this.#schedule();
    container.addEventListener('scroll', this.onScroll, { passive: true });
    this.resizeObserver = new ResizeObserver(() => { this.#sizePool(); this.#schedule(); });
    this.resizeObserver.observe(container);
    container.addEventListener('click', (event) => this.#click(event));
    this.#sizePool();
    // Rows this page showed last time (stale: read again as soon as connected).
    const cached = readCache(listId);
    if (cached) {
      this.total = cached.total;
      for (const [b, rows] of cached.blocks) this.blocks.set(b, { rows, generation: -1 });
      this.#schedule();
    }
  }

  /** Keeps the blocks around the viewport in the page's storage. */
  #saveCache() {
    if (this.cacheTimer) return;
    this.cacheTimer = setTimeout(() => {
      this.cacheTimer = 0;
      if (this.closed) return;
      const center = Math.floor(this.#viewport().first / BLOCK);
      const blocks = [...this.blocks].filter(([b, block]) => Math.abs(b - center) <= 1 && block.generation >= 0)
        .slice(0, CACHE_BLOCKS).map(([b, block]) => [b, block.rows]);
      try {
        localStorage.setItem(CACHE_KEY, JSON.stringify({ list: this.listId, total: this.total, blocks }));
      } catch { /* storage full: the cache is only a convenience */ }
    }, 300);
  }

  close() {
    this.closed = true;
    this.container.removeEventListener('scroll', this.onScroll);
    this.resizeObserver.disconnect();
  }

  /** Reads the first page (and the total). */
  async start() {
    await this.#fetch(0, this.generation);
    this.#render();
  }

  // ---- geometry ----------------------------------------------------------

  #sizePool() {
    const visible = Math.max(1, Math.ceil(this.container.clientHeight / ROW_HEIGHT));
    const wanted = visible + 2;
    while (this.pool.length < wanted) {
      const row = document.createElement('div');
      row.className = 'row';
      row.innerHTML = '<button type="button" class="check" data-role="check" aria-label="Check"></button>'
        + '<span class="text" data-role="text"></span><span class="due" data-role="due"></span>'
        + '<span class="price" data-role="price"></span><span class="tools">'
        + '<button type="button" data-role="up" title="Move up">↑</button>'
        + '<button type="button" data-role="down" title="Move down">↓</button>'
        + '<button type="button" data-role="edit" title="Edit">Edit</button>'
        + '<button type="button" data-role="delete" title="Delete">✕</button></span>';
      row.parts = {
        check: row.children[0], text: row.children[1], due: row.children[2], price: row.children[3],
      };
      this.spacer.append(row);
      this.pool.push(row);
    }
    while (this.pool.length > wanted) this.pool.pop().remove();
  }

  /** Maps the scroll position to the first row shown and the pixel offset of the pool. */
  #viewport() {
    const viewHeight = this.container.clientHeight;
    const contentHeight = this.total * ROW_HEIGHT;
    const spacerHeight = Math.min(contentHeight, MAX_SPACER_PX);
    const scrollTop = this.container.scrollTop;
    let virtualTop = scrollTop;
    if (contentHeight > spacerHeight) {
      const maxScroll = Math.max(1, spacerHeight - viewHeight);
      virtualTop = Math.min(1, scrollTop / maxScroll) * Math.max(0, contentHeight - viewHeight);
    }
    const first = Math.floor(virtualTop / ROW_HEIGHT);
    return { first, top: scrollTop - (virtualTop - first * ROW_HEIGHT), spacerHeight };
  }

  /** Scrolls so that row `index` is at the top. */
  scrollToIndex(index) {
    const contentHeight = this.total * ROW_HEIGHT;
    const spacerHeight = Math.min(contentHeight, MAX_SPACER_PX);
    const viewHeight = this.container.clientHeight;
    if (contentHeight <= spacerHeight) this.container.scrollTop = index * ROW_HEIGHT;
    else this.container.scrollTop = (index * ROW_HEIGHT) / Math.max(1, contentHeight - viewHeight) * (spacerHeight - viewHeight);
  }

  #schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => { this.frame = 0; this.#render(); });
  }

  // ---- rows ------------------------------------------------------------

  #item(index) {
    const block = this.blocks.get(Math.floor(index / BLOCK));
    return block?.rows[index % BLOCK];
  }

  #render() {
    if (this.closed) return;
    const { first, top, spacerHeight } = this.#viewport();
    this.spacer.style.height = `${spacerHeight}px`;
    this.pool.forEach((row, k) => {
      const index = first + k;
      row.style.transform = `translateY(${top + k * ROW_HEIGHT}px)`;
      this.#bind(row, index);
    });
    this.#load(first);
  }

  #bind(row, index) {
    if (index >= this.total) {
      if (!row.hidden) { row.hidden = true; row.removeAttribute('data-item-id'); row.boundKey = undefined; }
      return;
    }
    row.hidden = false;
    const item = this.#item(index);
    const pending = item ? this.pending(item.id) : undefined;
    const key = item ? `${index}:${item.id}:${item.checked}:${item.text}:${item.due}:${item.price}:${item.remind}:${JSON.stringify(pending)}` : `${index}:loading`;
    if (row.boundKey === key) return;
    row.boundKey = key;
    this.rowsBoundTotal += 1;
    row.dataset.index = String(index);
    if (!item) {
      row.removeAttribute('data-item-id');
      row.removeAttribute('data-checked');
      row.removeAttribute('data-pending');
      row.classList.add('loading');
      row.parts.check.textContent = '';
      row.parts.text.textContent = 'Loading…';
      row.parts.due.textContent = '';
      row.parts.price.textContent = '';
      return;
    }
    row.classList.remove('loading');
    const checked = pending?.checked ?? item.checked;
    row.dataset.itemId = String(item.id);
    row.dataset.checked = checked ? 'true' : 'false';
    if (pending) row.dataset.pending = 'true'; else row.removeAttribute('data-pending');
    row.classList.toggle('deleted', Boolean(pending?.deleted));
    row.parts.check.textContent = checked ? '✓' : '';
    row.parts.check.setAttribute('aria-pressed', checked ? 'true' : 'false');
    row.parts.text.textContent = pending?.text ?? item.text;
    row.parts.due.textContent = `${item.remind ? '⏰ ' : ''}${item.due !== undefined ? formatDue(item.due) : ''}`;
    row.parts.price.textContent = item.price !== undefined ? formatPrice(item.price) : '';
  }

  #click(event) {
    const button = event.target.closest('button[data-role]');
    const row = event.target.closest('.row');
    if (!button || !row || row.dataset.itemId === undefined) return;
    const index = Number(row.dataset.index);
    const item = this.#item(index);
    if (!item) return;
    const role = button.dataset.role;
    if (role === 'check') this.actions.check?.(item, index);
    else if (role === 'edit') this.actions.edit?.(item, index);
    else if (role === 'delete') this.actions.remove?.(item, index);
    else if (role === 'up' && index > 0) this.actions.move?.(item, index, index - 1);
    else if (role === 'down' && index + 1 < this.total) this.actions.move?.(item, index, index + 1);
  }

  // ---- pages -----------------------------------------------------------

  #load(first) {
    const from = Math.max(0, first - MARGIN_ROWS);
    const to = Math.min(this.total, first + this.pool.length + MARGIN_ROWS);
    const wanted = [];
    for (let b = Math.floor(from / BLOCK); b * BLOCK < to; b++) {
      const block = this.blocks.get(b);
      if ((!block || block.generation !== this.generation) && !this.loading.has(b)) wanted.push(b);
    }
    // Nearest the viewport first.
    const center = first / BLOCK;
    wanted.sort((a, b) => Math.abs(a - center) - Math.abs(b - center));
    for (const b of wanted) {
      if (this.loading.size >= MAX_IN_FLIGHT) break;
      this.#fetch(b, this.generation);
    }
    this.#evict(first);
  }

  async #fetch(b, generation) {
    this.loading.add(b);
    try {
      const page = await this.client.getPage(this.listId, { offset: b * BLOCK, limit: BLOCK });
      if (this.closed) return;
      this.revision = Math.max(this.revision, page.revision);
      if (page.total !== this.total) { this.total = page.total; this.onTotal(this.total); }
      this.blocks.set(b, { rows: page.rows, generation });
      this.#saveCache();
    } catch (error) {
      console.warn('page', b, error);
    } finally {
      this.loading.delete(b);
    }
    if (!this.closed) this.#schedule();
  }

  #evict(first) {
    if (this.blocks.size <= MAX_BLOCKS) return;
    const center = first / BLOCK;
    const far = [...this.blocks.keys()].sort((a, b) => Math.abs(b - center) - Math.abs(a - center));
    for (const b of far.slice(0, this.blocks.size - MAX_BLOCKS)) this.blocks.delete(b);
  }

  // ---- changes ---------------------------------------------------------

  /** Rows change in place (no row moves): apply to the cached items and rebind. */
  #updateItem(id, apply) {
    for (const block of this.blocks.values()) {
      const item = block.rows.find((r) => r.id === id);
      if (item) apply(item);
    }
  }

  /**
   * A committed change of this list (a CHANGE push or CHANGES element).
   * Changes of fields are applied to the cached rows; inserts, deletes and
   * moves shift rows, so the cached pages are read again (kept on screen
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
        case 'INSERT': this.total += 1; structural = true; break;
        case 'DELETE': this.total -= 1; structural = true; break;
        case 'MOVE': structural = true; break;
        default: break;
      }
    }
    this.revision = Math.max(this.revision, change.revision);
    if (structural) { this.onTotal(this.total); this.refresh(); } else this.#schedule();
  }

  /** Shows a local change at once (the server's answer or push confirms it). */
  applyLocal(id, apply) {
    this.#updateItem(id, apply);
    this.#schedule();
  }

  /** Reads every page in view again. */
  refresh() {
    this.generation += 1;
    this.#schedule();
  }

  /** Rebinds the rows (e.g. when pending changes changed). */
  redraw() {
    for (const row of this.pool) row.boundKey = undefined;
    this.#schedule();
  }
}
