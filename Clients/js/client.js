// A client that stays connected: it reconnects with back-off after the
// connection drops, says HELLO again, resumes its subscriptions from the last
// revision it has of each list (SPEC.md section 9), fetches a catch-up the
// server left to CHANGES_SINCE, and sends patches with idempotency keys,
// retrying each until it is answered, so that it takes effect exactly once.

import { ProtocolError, ErrorCode } from './wire.js';
import { ChangeKind, SubscribeStatus } from './messages.js';
import { Connection, ConnectionLostError } from './connection.js';

/** A random 64-bit client id (a BigInt) for idempotency keys. */
export function randomClientId() {
  const words = new Uint32Array(2);
  if (globalThis.crypto?.getRandomValues) globalThis.crypto.getRandomValues(words);
  else for (let i = 0; i < 2; i++) words[i] = Math.floor(Math.random() * 2 ** 32); // no Web Crypto (old Node)
  return (BigInt(words[0]) << 32n) | BigInt(words[1]);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Events (`client.on(name, fn)`):
 * - `state` (state, detail): `connecting`, `open`, `offline` (will retry),
 *   `refused` (the token was not accepted; no retry until `setToken`), `stopped`.
 * - `change` (ListChange): a change of a subscribed list, pushed or fetched, in revision order per list.
 * - `resync` (list, revision): the changes since the client's revision are gone; read the list again.
 * - `subscribed` (entries): SUBSCRIBED's entries after each (re)subscription.
 * - `dropped` (fields): the server dropped the subscriptions; the client subscribes again by itself.
 */
export class ChecklistClient {
  #listeners = new Map();
  #connection = null;
  #ready = null; // {promise, resolve}
  #stopped = false;
  #subscribedAll = false;
  #sequence;

  /**
   * Options:
   * - `openSocket()`: returns a new WebSocket-like object (e.g.
   *   `() => new WebSocket(url, 'checklists.v1')`).
   * - `clientName`, `token`.
   * - `clientId` (BigInt or Number) and `sequence` (the last sequence used):
   *   keep them across reloads so that retried patches keep their keys.
   * - `minDelayMs`, `maxDelayMs`: reconnect back-off.
   * - `pingIntervalMs` (default 20 s; 0: none): a PING this often while
   *   connected; a connection whose PONG has not come by the next one is
   *   taken as dead and replaced (a peer can vanish without closing, e.g.
   *   when a laptop sleeps).
   * - `rateLimitRetries` (default 5): how often a request answered
   *   `RATE_LIMITED` is sent again, each time after the `retryAfterMs` the
   *   server asked for (nothing of a refused request was done, so every
   *   request may be sent again); past them the error is thrown.
   * - `sleep(ms)`: how the client waits (tests pass their own).
   */
  constructor({ openSocket, clientName = 'checklists-web/1.0', token, clientId = randomClientId(), sequence = 0, minDelayMs = 200, maxDelayMs = 5000, pingIntervalMs = 20000, rateLimitRetries = 5, sleep: wait = sleep } = {}) {
    this.rateLimitRetries = rateLimitRetries;
    this.sleep = wait;
    this.openSocket = openSocket;
    this.clientName = clientName;
    this.token = token;
    this.clientId = clientId;
    this.#sequence = sequence;
    this.minDelayMs = minDelayMs;
    this.maxDelayMs = maxDelayMs;
    this.pingIntervalMs = pingIntervalMs;
    /** The last revision the client has of each list (list id -> revision). */
    this.revisions = new Map();
    this.state = 'stopped';
    this.server = null;
    this.#resetReady();
  }

  on(name, fn) {
    if (!this.#listeners.has(name)) this.#listeners.set(name, new Set());
    this.#listeners.get(name).add(fn);
    return () => this.#listeners.get(name).delete(fn);
  }

  #emit(name, ...args) {
    for (const fn of this.#listeners.get(name) ?? []) {
      try { fn(...args); } catch (e) { console.error(e); }
    }
  }

  #setState(state, detail) {
    this.state = state;
    this.#emit('state', state, detail);
  }

  #resetReady() {
    const ready = { resolved: false };
    ready.promise = new Promise((r) => { ready.resolve = (c) => { ready.resolved = true; r(c); }; });
    this.#ready = ready;
  }

  /** The last sequence number handed out. */
  get sequence() { return this.#sequence; }

  /** A fresh idempotency key `{client, sequence}`. */
  nextKey() {
    this.#sequence += 1;
    return { client: this.clientId, sequence: this.#sequence };
  }

  /** Starts connecting (and reconnecting until `stop`). */
  start() {
    this.#stopped = false;
    this.#run();
    return this;
  }

  stop() {
    this.#stopped = true;
    this.#connection?.close();
    this.#setState('stopped');
  }

  /** Replaces the token and reconnects (after `refused`, or to change namespace). */
  setToken(token) {
    this.token = token;
    this.revisions.clear();
    if (this.#connection && !this.#connection.closed) this.#connection.close();
    else if (this.state === 'refused' || this.state === 'stopped') this.start();
  }

  /** Resolves with the open connection (waits while offline). */
  ready() { return this.#ready.promise; }

  async #run() {
    if (this.#running) return;
    this.#running = true;
    let delay = this.minDelayMs;
    while (!this.#stopped) {
      this.#setState('connecting');
      let connection;
      const token = this.token;
      try {
        connection = await Connection.open(this.openSocket(), {
          onPush: (message) => this.#onPush(message),
          onClose: () => {},
        });
        const closed = new Promise((resolve) => { connection.onClose = resolve; });
        this.server = await connection.hello({ clientName: this.clientName, token });
        this.#connection = connection;
        if (this.#subscribedAll) await this.#subscribe(connection);
        delay = this.minDelayMs;
        this.#setState('open');
        this.#ready.resolve(connection);
        const keepAlive = this.#keepAlive(connection);
        await closed;
        clearInterval(keepAlive);
      } catch (error) {
        connection?.close();
        // Refused: wait for another token (unless one was set meanwhile).
        if (error instanceof ProtocolError && error.code === ErrorCode.NOT_AUTHENTICATED && token === this.token) {
          this.#running = false;
          this.#setState('refused', error);
          return;
        }
      }
      if (this.#ready.resolved) this.#resetReady();
      this.#connection = null;
      if (this.#stopped) break;
      this.#setState('offline');
      await sleep(delay * (0.75 + Math.random() / 2));
      delay = Math.min(delay * 2, this.maxDelayMs);
    }
    this.#running = false;
  }

  #running = false;

  /** PINGs `connection` every `pingIntervalMs`; closes it when a PING is still unanswered at the next. */
  #keepAlive(connection) {
    if (!this.pingIntervalMs) return 0;
    let waiting = false;
    return setInterval(() => {
      if (waiting) { connection.close(); return; }
      waiting = true;
      connection.ping().then(() => { waiting = false; }, () => {});
    }, this.pingIntervalMs);
  }

  /**
   * Subscribes to every list of the namespace (scope 1), from the revisions in
   * `revisions` (set them first for lists the caller already holds), and again
   * after every reconnect from the last revisions seen.
   */
  async subscribeAll() {
    this.#subscribedAll = true;
    const connection = this.#connection;
    if (connection && !connection.closed) await this.#subscribe(connection);
  }

  async #subscribe(connection) {
    const lists = [...this.revisions].map(([list, revision]) => ({ list, revision }));
    const entries = await connection.subscribe({ scope: 1, lists });
    for (const entry of entries) {
      const mine = this.revisions.get(entry.list);
      switch (entry.status) {
        case SubscribeStatus.LIVE:
          if (mine === undefined) this.revisions.set(entry.list, entry.revision);
          break;
        case SubscribeStatus.RESYNC:
          this.revisions.set(entry.list, entry.revision);
          this.#emit('resync', entry.list, entry.revision);
          break;
        case SubscribeStatus.FETCH:
          this.#fetch(connection, entry.list, mine ?? 0, entry.revision);
          break;
        case SubscribeStatus.NOT_FOUND:
          this.revisions.delete(entry.list);
          this.#emit('change', { list: entry.list, revision: mine ?? 0, kind: ChangeKind.LIST_DELETED });
          break;
        default: break;
      }
    }
    this.#emit('subscribed', entries);
    return entries;
  }

  /** Reads changes with CHANGES_SINCE from `from` until `to` (FETCH). */
  async #fetch(connection, list, from, to) {
    try {
      let at = from;
      while (at < to) {
        const answer = await connection.changesSince(list, at, 1000);
        if (answer.changes.length === 0) break;
        for (const change of answer.changes) this.#apply(change);
        at = answer.changes[answer.changes.length - 1].revision;
      }
    } catch (error) {
      if (error instanceof ProtocolError && error.code === ErrorCode.RESYNC_REQUIRED) {
        this.revisions.set(list, error.revision ?? to);
        this.#emit('resync', list, error.revision ?? to);
      }
    }
  }

  #apply(change) {
    const mine = this.revisions.get(change.list);
    if (mine !== undefined && change.revision <= mine) return; // already seen
    if (change.kind === ChangeKind.LIST_DELETED) this.revisions.delete(change.list);
    else this.revisions.set(change.list, change.revision);
    this.#emit('change', change);
  }

  #onPush(message) {
    if (message.message === 'CHANGE') this.#apply(message.fields);
    else if (message.message === 'SUBSCRIPTION_DROPPED') {
      this.#emit('dropped', message.fields);
      const connection = this.#connection;
      if (connection && this.#subscribedAll) this.#subscribe(connection).catch(() => {});
    }
  }

  /**
   * Runs `fn(connection)` once connected. With `retry` (reads, keyed patches)
   * it runs again on the next connection when this one is lost; without, the
   * ConnectionLostError is thrown (a change without a key may or may not have
   * been applied).
   */
  async withConnection(fn, { retry = true } = {}) {
    let rateLimited = 0;
    for (;;) {
      const connection = await this.ready();
      try {
        return await fn(connection);
      } catch (error) {
        if (error instanceof ProtocolError && error.code === ErrorCode.RATE_LIMITED && rateLimited < this.rateLimitRetries) {
          rateLimited += 1;
          await this.sleep(Math.max(error.retryAfterMs ?? this.minDelayMs, 1));
          continue;
        }
        if (!(error instanceof ConnectionLostError) || !retry) throw error;
      }
    }
  }

  /**
   * A PATCH with an idempotency key (`key`, default a fresh one): sent again
   * on every reconnect and after `UNAVAILABLE` until it is answered, so it is
   * applied exactly once. Resolves to PATCH_OK's fields.
   */
  async patch(list, ops, { key = this.nextKey(), baseRevision } = {}) {
    let delay = this.minDelayMs;
    for (;;) {
      try {
        return await this.withConnection((c) => c.patch(list, ops, { ...key, baseRevision }));
      } catch (error) {
        if (!(error instanceof ProtocolError && error.code === ErrorCode.UNAVAILABLE)) throw error;
        await this.sleep(delay);
        delay = Math.min(delay * 2, this.maxDelayMs);
      }
    }
  }

  listLists() { return this.withConnection((c) => c.listLists()); }
  createList(name, icon) { return this.withConnection((c) => c.createList(name, icon), { retry: false }); }
  updateList(list, changes) { return this.withConnection((c) => c.updateList(list, changes), { retry: false }); }
  deleteList(list) { return this.withConnection((c) => c.deleteList(list), { retry: false }); }
  getPage(list, options) { return this.withConnection((c) => c.getPage(list, options)); }
  changesSince(list, revision, limit) { return this.withConnection((c) => c.changesSince(list, revision, limit)); }
}
