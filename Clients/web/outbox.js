// The offline edit queue: every item change is a PATCH with an idempotency
// key, kept in the page's storage (localStorage) until the server answers it,
// so it survives a reload and is applied exactly once, however often it is
// sent. One sender drains the queue in order.

const STORAGE_KEY = 'checklists.outbox';

/** Reads the queue (BigInt client ids are stored as strings). */
function load() {
  try {
    const raw = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? '[]');
    return raw.map((e) => ({ ...e, key: { client: BigInt(e.key.client), sequence: e.key.sequence } }));
  } catch {
    return [];
  }
}

function save(entries) {
  const raw = entries.map((e) => ({ ...e, key: { client: e.key.client.toString(), sequence: e.key.sequence } }));
  localStorage.setItem(STORAGE_KEY, JSON.stringify(raw));
}

export class Outbox {
  /**
   * `client`: a ChecklistClient. `onChange()` is called whenever the queue
   * changes; `onApplied(entry, patchOK)` when an entry was answered;
   * `onFailed(entry, error)` when the server refused it (it is dropped then).
   */
  constructor(client, { onChange = () => {}, onApplied = () => {}, onFailed = () => {} } = {}) {
    this.client = client;
    this.onChange = onChange;
    this.onApplied = onApplied;
    this.onFailed = onFailed;
    this.entries = load();
    this.sending = false;
    // Another tab of the page changed the queue (it may have sent entries).
    window.addEventListener('storage', (event) => {
      if (event.key !== STORAGE_KEY) return;
      this.entries = load();
      this.onChange();
      this.flush();
    });
  }

  /** Queues a patch of `list` and starts sending. `label` says what it does, for the page. */
  add(list, ops, label) {
    const entry = { id: `${Date.now()}-${Math.random().toString(36).slice(2)}`, list, ops, label, key: this.client.nextKey() };
    this.entries.push(entry);
    save(this.entries);
    this.onChange();
    this.flush();
    return entry;
  }

  /** Entries of one list. */
  forList(list) { return this.entries.filter((e) => e.list === list); }

  #remove(entry) {
    this.entries = load().filter((e) => e.id !== entry.id);
    save(this.entries);
    this.onChange();
  }

  /** Sends the queue, oldest first, one at a time; each waits for a connection. */
  async flush() {
    if (this.sending) return;
    this.sending = true;
    try {
      while (this.entries.length > 0) {
        const entry = this.entries[0];
        try {
          const ok = await this.client.patch(entry.list, entry.ops, { key: entry.key });
          this.#remove(entry);
          this.onApplied(entry, ok);
        } catch (error) {
          // Refused by the server (the item was deleted meanwhile, a forgotten key, ...):
          // nothing of it was applied; drop it and say so.
          this.#remove(entry);
          this.onFailed(entry, error);
        }
      }
    } finally {
      this.sending = false;
    }
  }
}
