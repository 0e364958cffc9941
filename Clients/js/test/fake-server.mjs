// An in-memory stand-in for checklistd, speaking the protocol through the
// JavaScript codec over fake WebSocket pairs, so that the connection and the
// reconnecting client can be tested without a server. It keeps lists,
// revisions, a change log, idempotency keys and scope-1 subscriptions, and it
// cuts its answers into messages of `chunk` bytes (several frames per message
// or part of one).

import {
  FrameParser, decodeFrame, encodeFrame, frameBytes, deflate, encodeBody, MessageType as T, ProtocolError, ErrorCode,
} from '../checklists.js';

class FakeSocket {
  constructor(server) {
    this.server = server;
    this.readyState = 0;
    this.binaryType = 'blob';
    this.listeners = new Map();
    this.sent = [];
  }
  addEventListener(type, fn) {
    if (!this.listeners.has(type)) this.listeners.set(type, []);
    this.listeners.get(type).push(fn);
  }
  emit(type, event = {}) { for (const fn of this.listeners.get(type) ?? []) fn(event); }
  send(bytes) {
    if (this.readyState !== 1) throw new Error('not open');
    this.sent.push(bytes.slice());
    this.server.receive(this, bytes.slice());
  }
  close() {
    if (this.readyState === 3) return;
    this.readyState = 3;
    setTimeout(() => this.emit('close', { code: 1000 }), 0);
    this.server.forget(this);
  }
}

export class FakeServer {
  constructor({ chunk = 3, token, compress = true } = {}) {
    this.chunk = chunk;
    this.token = token;
    this.compress = compress;
    this.lists = new Map(); // id -> {id, name, icon, revision, items: [{id, text, checked, remind}], nextItem}
    this.changes = new Map(); // id -> [ListChange]
    this.keys = new Map(); // "client/sequence" -> PATCH_OK fields
    this.nextList = 1;
    this.sockets = new Set();
    this.state = new Map(); // socket -> {parser, hello, subscribed}
    this.requests = []; // every decoded request {message, fields}
    this.dropBeforeAnswer = null; // (message) => true: apply the request, then drop the connection without answering
    this.subscribeStatus = null; // (entry) => status override
    this.answerPings = true; // false: PINGs are read and never answered (a peer that vanished)
    this.rateLimit = null; // (message) => milliseconds: answer ERROR RATE_LIMITED with them, doing nothing
  }

  /** A new client socket, open on the next turn. */
  socket() {
    const s = new FakeSocket(this);
    this.sockets.add(s);
    this.state.set(s, { parser: new FrameParser(), hello: false, subscribed: false });
    setTimeout(() => { s.readyState = 1; s.emit('open'); }, 0);
    return s;
  }

  forget(s) { this.sockets.delete(s); this.state.delete(s); }

  /** Closes every connection as a crashed server would. */
  dropAll() { for (const s of [...this.sockets]) s.close(); }

  receive(s, bytes) {
    const st = this.state.get(s);
    if (!st) return;
    st.parser.push(bytes);
    for (let f = st.parser.next(); f; f = st.parser.next()) this.#handle(s, st, f);
  }

  async #handle(s, st, frame) {
    const m = await decodeFrame(frame, { direction: 'request' });
    this.requests.push({ message: m.message, fields: m.fields });
    let answer;
    try {
      const wait = this.rateLimit?.(m);
      if (wait !== undefined) throw new ProtocolError(ErrorCode.RATE_LIMITED, `retry in ${wait} ms`, { retryAfterMs: wait });
      answer = this.#answer(s, st, m);
    } catch (e) {
      if (!(e instanceof ProtocolError)) throw e;
      const fields = { code: e.code, message: e.serverMessage };
      if (e.field !== undefined) fields.field = e.field;
      if (e.revision !== undefined) fields.revision = e.revision;
      if (e.retryAfterMs !== undefined) fields.retryAfterMs = e.retryAfterMs;
      answer = { type: T.ERROR, fields };
    }
    if (m.type === T.PING && !this.answerPings) return;
    if (this.dropBeforeAnswer?.(m)) { this.dropBeforeAnswer = null; s.close(); return; }
    let bytes;
    const body = encodeBody(answer.type, answer.fields, 'response');
    if (this.compress && body.length >= 1024 && answer.type !== T.HELLO_OK) bytes = frameBytes(answer.type, 1, frame.request, await deflate(body));
    else bytes = encodeFrame(answer.type, frame.request, answer.fields, 'response');
    this.#send(s, bytes);
    for (const push of answer.after ?? []) this.#send(s, encodeFrame(T.CHANGE, 0, push, 'response'));
  }

  #send(s, bytes) {
    if (s.readyState !== 1) return;
    for (let at = 0; at < bytes.length; at += this.chunk) {
      const part = bytes.slice(at, at + this.chunk);
      s.emit('message', { data: part.buffer });
    }
  }

  #list(id) {
    const l = this.lists.get(id);
    if (!l) throw new ProtocolError(ErrorCode.NOT_FOUND, `no list ${id}`);
    return l;
  }

  summary(l) {
    return { id: l.id, name: l.name, icon: l.icon, itemCount: l.items.length, uncheckedCount: l.items.filter((i) => !i.checked).length, revision: l.revision };
  }

  /** Commits a change and pushes it to subscribers. */
  commit(change) {
    if (!this.changes.has(change.list)) this.changes.set(change.list, []);
    this.changes.get(change.list).push(change);
    for (const [s, st] of this.state) if (st.subscribed) this.#send(s, encodeFrame(T.CHANGE, 0, change, 'response'));
  }

  createList(name, icon = 'No Icon') {
    const l = { id: this.nextList++, name, icon, revision: 1, items: [], nextItem: 1 };
    this.lists.set(l.id, l);
    this.commit({ list: l.id, revision: 1, kind: 1, name, icon });
    return l;
  }

  /** Applies INSERT (where 2), TOGGLE and SET_CHECKED: enough for the tests. */
  applyPatch(fields) {
    const l = this.#list(fields.list);
    const applied = [];
    const pairs = [];
    for (const op of fields.ops) {
      if (op.op === 'INSERT') {
        const item = { id: l.nextItem++, text: op.text, checked: op.checked, remind: op.remind };
        l.items.push(item);
        if (op.tempRef) pairs.push({ tempRef: op.tempRef, id: item.id });
        applied.push({ op: 'INSERT', id: item.id, index: l.items.length - 1, text: item.text, checked: item.checked, remind: item.remind });
      } else {
        const item = l.items.find((i) => i.id === op.ref.id);
        if (!item) throw new ProtocolError(ErrorCode.NOT_FOUND, 'no such item', { field: 'ref' });
        item.checked = op.op === 'TOGGLE' ? !item.checked : op.checked;
        applied.push({ op: 'SET_CHECKED', id: item.id, checked: item.checked });
      }
    }
    l.revision += 1;
    this.commit({ list: l.id, revision: l.revision, kind: 4, ops: applied });
    return { list: l.id, revision: l.revision, pairs };
  }

  #answer(s, st, m) {
    const f = m.fields;
    if (m.type === T.HELLO) {
      if (this.token !== undefined && f.token !== this.token) throw new ProtocolError(ErrorCode.NOT_AUTHENTICATED, 'bad token');
      st.hello = true;
      return { type: T.HELLO_OK, fields: { version: 1, features: 3, serverName: 'fake/1.0', maxFrameBytes: 4194304, maxPageRows: 1000, maxTextBytes: 4096, maxBatchOps: 1000 } };
    }
    if (!st.hello) throw new ProtocolError(ErrorCode.HELLO_REQUIRED, 'HELLO first');
    switch (m.type) {
      case T.PING: return { type: T.PONG, fields: { data: f.data } };
      case T.LIST_LISTS: return { type: T.LISTS, fields: { lists: [...this.lists.values()].map((l) => this.summary(l)) } };
      case T.CREATE_LIST: return { type: T.LIST_CREATED, fields: this.summary(this.createList(f.name, f.icon)) };
      case T.GET_PAGE: {
        const l = this.#list(f.list);
        const rows = l.items.slice(f.start, f.start + f.limit).map((i) => ({ ...i }));
        return { type: T.PAGE, fields: { list: l.id, revision: l.revision, total: l.items.length, offset: f.start, rows } };
      }
      case T.PATCH: {
        const key = f.client !== undefined ? `${f.client}/${f.sequence}` : null;
        if (key && this.keys.has(key)) return { type: T.PATCH_OK, fields: this.keys.get(key) };
        const ok = this.applyPatch(f);
        if (key) this.keys.set(key, ok);
        return { type: T.PATCH_OK, fields: ok };
      }
      case T.SUBSCRIBE: {
        st.subscribed = true;
        const entries = [];
        const after = [];
        const named = new Map(f.lists.map((e) => [e.list, e.revision]));
        const ids = [...new Set([...named.keys(), ...this.lists.keys()])];
        for (const id of ids) {
          const l = this.lists.get(id);
          if (!l) { entries.push({ list: id, revision: 0, status: 3 }); continue; }
          const status = this.subscribeStatus?.({ list: id, revision: named.get(id) }) ?? 0;
          entries.push({ list: id, revision: l.revision, status });
          const from = named.get(id);
          if (status === 0 && from !== undefined) after.push(...(this.changes.get(id) ?? []).filter((c) => c.revision > from));
        }
        return { type: T.SUBSCRIBED, fields: { lists: entries }, after };
      }
      case T.CHANGES_SINCE: {
        const l = this.#list(f.list);
        const changes = (this.changes.get(l.id) ?? []).filter((c) => c.revision > f.revision).slice(0, f.limit);
        return { type: T.CHANGES, fields: { list: l.id, revision: l.revision, changes } };
      }
      default: throw new ProtocolError(ErrorCode.UNKNOWN_MESSAGE, 'not in the fake');
    }
  }
}
