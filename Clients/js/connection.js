// One connection to a Checklists server over a WebSocket-like transport:
// binary messages carry the protocol's byte stream (a message may hold several
// frames or part of one). Requests are matched to answers by request id;
// pushes (request id 0) go to `onPush`.

import { ProtocolError } from './wire.js';
import { MessageType as T, Feature, StartKind, Filter, StatsOption, encodeBody } from './messages.js';
import { FrameParser, frameBytes, decodeFrame, deflate, DEFAULT_MAX_FRAME_BYTES, COMPRESS_MIN_BYTES, FLAG_COMPRESSED } from './frames.js';

/** The connection ended (closed by either side, or the transport failed) before an answer came. */
export class ConnectionLostError extends Error {
  constructor(message = 'connection lost') {
    super(message);
    this.name = 'ConnectionLostError';
  }
}

const OPEN = 1;

/** The WebSocket subprotocol of the Checklists protocol. */
export const SUBPROTOCOL = 'checklists.v1';

function listen(socket, type, handler) {
  if (typeof socket.addEventListener === 'function') socket.addEventListener(type, handler);
  else socket[`on${type}`] = handler;
}

function toBytes(data) {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  throw new TypeError('a text message: the protocol travels in binary messages only');
}

/**
 * A connection over `socket`, an object shaped like a browser WebSocket
 * (`send`, `close`, `readyState`, `binaryType`, and `open` / `message` /
 * `close` / `error` events whose message `data` is an ArrayBuffer or bytes).
 */
export class Connection {
  /** Resolves once `socket` is open (at once if it is). */
  static open(socket, options) {
    return new Promise((resolve, reject) => {
      const connection = new Connection(socket, options);
      if (socket.readyState === OPEN) { resolve(connection); return; }
      connection.#whenOpen = { resolve: () => resolve(connection), reject };
    });
  }

  #socket;
  #parser;
  #pending = new Map(); // request id -> {resolve, reject}
  #nextId = 1;
  #receiving = Promise.resolve();
  #sending = null; // a promise while a compressed frame is being prepared
  #whenOpen = null;
  #closed = false;
  #compressionAllowed;

  /**
   * Options: `onPush(message)` for pushes (`{type, message, fields}` of
   * CHANGE, SUBSCRIPTION_DROPPED, or a connection-level ERROR), `onClose(error)`.
   */
  constructor(socket, { onPush = () => {}, onClose = () => {}, acceptCompression = true } = {}) {
    this.#socket = socket;
    this.onPush = onPush;
    this.onClose = onClose;
    this.acceptCompression = acceptCompression;
    this.#compressionAllowed = acceptCompression;
    /** HELLO_OK's fields once `hello` succeeded. */
    this.server = null;
    this.maxFrameBytes = DEFAULT_MAX_FRAME_BYTES;
    this.#parser = new FrameParser({ maxFrameBytes: this.maxFrameBytes });
    socket.binaryType = 'arraybuffer';
    listen(socket, 'open', () => { this.#whenOpen?.resolve(); this.#whenOpen = null; });
    listen(socket, 'message', (event) => this.#receive(event.data));
    listen(socket, 'close', () => this.#lost(new ConnectionLostError('the connection closed')));
    listen(socket, 'error', () => this.#lost(new ConnectionLostError('the connection failed')));
  }

  /** True once the connection has ended. */
  get closed() { return this.#closed; }

  /** Requests sent and not yet answered. */
  get pendingCount() { return this.#pending.size; }

  /** Closes the connection; pending requests fail with ConnectionLostError. */
  close() {
    try { this.#socket.close(1000); } catch { /* already closed */ }
    this.#lost(new ConnectionLostError('closed by the client'));
  }

  #lost(error) {
    if (this.#closed) return;
    this.#closed = true;
    this.#whenOpen?.reject(error);
    this.#whenOpen = null;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.reject(error);
    this.onClose(error);
  }

  #receive(data) {
    if (this.#closed) return;
    let bytes;
    try { bytes = toBytes(data); } catch (e) { this.#fail(e); return; }
    this.#parser.push(bytes);
    for (;;) {
      let frame;
      try { frame = this.#parser.next(); } catch (e) { this.#fail(e); return; }
      if (!frame) break;
      // Frames are handled one after the other: a compressed one is inflated
      // asynchronously, and the frames behind it wait for it.
      this.#receiving = this.#receiving.then(() => this.#handle(frame));
    }
  }

  #fail(error) {
    try { this.#socket.close(1002); } catch { /* closed */ }
    this.#lost(error instanceof ConnectionLostError ? error : Object.assign(new ConnectionLostError(error.message), { cause: error }));
  }

  async #handle(frame) {
    if (this.#closed) return;
    let message;
    try {
      message = await decodeFrame(frame, { direction: 'response', maxFrameBytes: this.maxFrameBytes, compressionAllowed: this.#compressionAllowed });
    } catch (error) {
      // The frame was skipped whole: fail the request it answers.
      this.#settle(frame.request, null, error);
      return;
    }
    if (message.type === T.ERROR) {
      const f = message.fields;
      const error = new ProtocolError(f.code, f.message, { field: f.field, revision: f.revision, retryAfterMs: f.retryAfterMs, fromServer: true });
      if (frame.request === 0 || !this.#pending.has(frame.request)) this.onPush({ ...message, error });
      else this.#settle(frame.request, null, error);
      return;
    }
    if (frame.request === 0 && (message.type & 0xf0) === 0xe0) { this.onPush(message); return; }
    this.#settle(frame.request, message, null);
  }

  #settle(id, message, error) {
    const p = this.#pending.get(id);
    if (!p) return;
    this.#pending.delete(id);
    if (error) p.reject(error); else p.resolve(message);
  }

  #allocateId() {
    for (;;) {
      const id = this.#nextId;
      this.#nextId = id >= 0xffffffff ? 1 : id + 1;
      if (!this.#pending.has(id)) return id;
    }
  }

  /**
   * Sends a request; resolves to the answer `{type, message, fields}`, rejects
   * with a `ProtocolError` (an ERROR answer, `fromServer`) or `ConnectionLostError`.
   * A body of 1024 bytes or more is compressed once the server announced COMPRESSION.
   */
  request(type, fields = {}) {
    if (this.#closed) return Promise.reject(new ConnectionLostError('the connection is closed'));
    const id = this.#allocateId();
    const body = encodeBody(type, fields, 'request');
    const answer = new Promise((resolve, reject) => this.#pending.set(id, { resolve, reject }));
    const compress = body.length >= COMPRESS_MIN_BYTES && this.server && (this.server.features & Feature.COMPRESSION) && type !== T.HELLO;
    if (compress || this.#sending) {
      // Keep the order of requests: everything behind a frame being compressed waits for it.
      const previous = this.#sending ?? Promise.resolve();
      const sent = previous.then(async () => {
        let flags = 0;
        let out = body;
        if (compress) {
          const packed = await deflate(body);
          if (packed.length < body.length) { flags = FLAG_COMPRESSED; out = packed; }
        }
        this.#write(frameBytes(type, flags, id, out));
      });
      this.#sending = sent;
      sent.finally(() => { if (this.#sending === sent) this.#sending = null; });
    } else {
      this.#write(frameBytes(type, 0, id, body));
    }
    return answer;
  }

  #write(bytes) {
    if (this.#closed) return;
    try { this.#socket.send(bytes); } catch (e) { this.#fail(e); }
  }

  // ---- the protocol's requests ----------------------------------------

  /**
   * HELLO: `{clientName, token?, features?, minVersion?, maxVersion?}`.
   * Resolves to HELLO_OK's fields and adopts the server's limits.
   */
  async hello({ clientName = 'checklists-js/1.0', token, features = (this.acceptCompression ? Feature.COMPRESSION : 0) | Feature.CLIENT_KEYS, minVersion = 1, maxVersion = 1 } = {}) {
    this.#compressionAllowed = (features & Feature.COMPRESSION) !== 0;
    const fields = { minVersion, maxVersion, features, clientName };
    if (token !== undefined && token !== '') fields.token = token;
    const { fields: ok } = await this.request(T.HELLO, fields);
    this.server = ok;
    this.maxFrameBytes = ok.maxFrameBytes;
    this.#parser.maxFrameBytes = ok.maxFrameBytes;
    return ok;
  }

  async ping(data = new Uint8Array(0)) { return (await this.request(T.PING, { data })).fields.data; }

  /** Every list of the namespace: ListSummary objects by id. */
  async listLists() { return (await this.request(T.LIST_LISTS)).fields.lists; }

  async createList(name, icon = 'No Icon') { return (await this.request(T.CREATE_LIST, { name, icon })).fields; }

  /** `changes`: `{name?, icon?}`. Resolves to the ListSummary after the change. */
  async updateList(list, changes = {}) {
    const fields = { list };
    if (changes.name !== undefined) fields.name = changes.name;
    if (changes.icon !== undefined) fields.icon = changes.icon;
    return (await this.request(T.UPDATE_LIST, fields)).fields;
  }

  async deleteList(list) { return (await this.request(T.DELETE_LIST, { list })).fields; }

  /**
   * A page of rows: `{offset}`, `{anchor}` (an item id) or `{key}` (a client
   * key), with `limit` (default 100) and `filter` (Filter, default ALL).
   * Resolves to PAGE's fields: `{list, revision, total, offset, rows}`.
   */
  async getPage(list, { offset, anchor, key, limit = 100, filter = Filter.ALL } = {}) {
    let startKind = StartKind.OFFSET;
    let start = offset ?? 0;
    if (anchor !== undefined) { startKind = StartKind.ANCHOR; start = anchor; }
    if (key !== undefined) { startKind = StartKind.KEY; start = key; }
    return (await this.request(T.GET_PAGE, { list, filter, startKind, start, limit })).fields;
  }

  /**
   * PATCH: `ops` as in messages.js (`{op: 'INSERT', where, ...}`, `{op: 'TOGGLE', ref: {id}}`, ...),
   * with `baseRevision` and the idempotency key `client`, `sequence` (section 9) when given.
   */
  async patch(list, ops, { baseRevision, client, sequence } = {}) {
    const fields = { list, ops };
    if (baseRevision !== undefined) fields.baseRevision = baseRevision;
    if (client !== undefined) { fields.client = client; fields.sequence = sequence; }
    return (await this.request(T.PATCH, fields)).fields;
  }

  /** SUBSCRIBE: `scope` 0 (the lists named) or 1 (every list); `lists`: `[{list, revision?}]`. */
  async subscribe({ scope = 1, lists = [] } = {}) { return (await this.request(T.SUBSCRIBE, { scope, lists })).fields.lists; }

  async unsubscribe({ scope = 1, lists = [] } = {}) { await this.request(T.UNSUBSCRIBE, { scope, lists }); }

  /** CHANGES_SINCE: resolves to `{list, revision, changes}`. */
  async changesSince(list, revision, limit = 1000) { return (await this.request(T.CHANGES_SINCE, { list, revision, limit })).fields; }

  /**
   * STATS: the server's figures. With `usage`, also the connection's own namespace usage
   * (`usageLists`, `usageItems`, `usageBytes`, and `quotaLists`, `quotaItems`, `quotaBytes` where set);
   * a server that predates it leaves them out.
   */
  async stats({ usage = false } = {}) {
    return (await this.request(T.STATS, usage ? { options: StatsOption.USAGE } : {})).fields;
  }
}

