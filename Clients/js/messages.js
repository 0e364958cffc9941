// Checklists wire protocol v1: every message's body (Protocol/SPEC.md
// sections 5 and 6), encoded from and decoded to plain objects whose keys are
// the field names of the SPEC's tables (the same shape as the golden vectors'
// `fields`, Protocol/vectors/README.md), with `bytes` fields as Uint8Array.

import { Reader, Writer, ProtocolError, ErrorCode, badField } from './wire.js';

/** Message types of SPEC.md section 5. */
export const MessageType = Object.freeze({
  HELLO: 0x01, PING: 0x02, LIST_LISTS: 0x10, CREATE_LIST: 0x11, UPDATE_LIST: 0x12,
  DELETE_LIST: 0x13, GET_PAGE: 0x20, PATCH: 0x21, SUBSCRIBE: 0x30, UNSUBSCRIBE: 0x31,
  CHANGES_SINCE: 0x32, EXPORT: 0x40, IMPORT: 0x41, STATS: 0x50,
  HELLO_OK: 0x81, PONG: 0x82, LISTS: 0x90, LIST_CREATED: 0x91, LIST_UPDATED: 0x92,
  LIST_DELETED: 0x93, PAGE: 0xA0, PATCH_OK: 0xA1, SUBSCRIBED: 0xB0, UNSUBSCRIBED: 0xB1,
  CHANGES: 0xB2, EXPORT_CHUNK: 0xC0, IMPORT_OK: 0xC1, STATS_REPORT: 0xD0,
  CHANGE: 0xE0, SUBSCRIPTION_DROPPED: 0xE1, ERROR: 0xFF,
});

/** HELLO / HELLO_OK feature bits. */
export const Feature = Object.freeze({ COMPRESSION: 1, CLIENT_KEYS: 2 });
/** ListChange kinds (section 6.14). */
export const ChangeKind = Object.freeze({ LIST_CREATED: 1, LIST_UPDATED: 2, LIST_DELETED: 3, PATCHED: 4, OMITTED: 5 });
/** SUBSCRIBED entry statuses (section 6.11). */
export const SubscribeStatus = Object.freeze({ LIVE: 0, RESYNC: 1, FETCH: 2, NOT_FOUND: 3 });
/** GET_PAGE filters and start kinds (section 6.7). */
export const Filter = Object.freeze({ ALL: 0, CHECKED: 1, UNCHECKED: 2 });
export const StartKind = Object.freeze({ OFFSET: 0, ANCHOR: 1, KEY: 2 });
/** STATS `options` bits: USAGE asks for the connection's namespace usage (STATS_REPORT presence bit 5). */
export const StatsOption = Object.freeze({ USAGE: 1 });
/** PATCH opcodes (section 6.8). */
export const Opcode = Object.freeze({
  INSERT: 1, SET_TEXT: 2, SET_CHECKED: 3, TOGGLE: 4, SET_DUE: 5, SET_REMIND: 6,
  SET_PRICE: 7, DELETE: 8, MOVE: 9, SET_KEY: 10,
});
const opcodeNames = Object.fromEntries(Object.entries(Opcode).map(([k, v]) => [v, k]));

// ---- shared structures --------------------------------------------------

function writeSummary(w, s) {
  w.varint(s.id).string(s.name).string(s.icon).varint(s.itemCount).varint(s.uncheckedCount).varint(s.revision);
}
function readSummary(r) {
  return {
    id: r.varint('id'), name: r.string('name'), icon: r.string('icon'),
    itemCount: r.varint('itemCount'), uncheckedCount: r.varint('uncheckedCount'), revision: r.varint('revision'),
  };
}

/** ItemFields: `text`, `checked`, `remind`, optional `due`, `price`, `clientKey`. */
function writeItemFields(w, f) {
  let flags = (f.checked ? 1 : 0) | (f.remind ? 2 : 0);
  if (f.due !== undefined) flags |= 4;
  if (f.price !== undefined) flags |= 8;
  if (f.clientKey !== undefined) flags |= 16;
  w.u8(flags).string(f.text);
  if (f.due !== undefined) w.zigzag(f.due);
  if (f.price !== undefined) w.zigzag(f.price);
  if (f.clientKey !== undefined) w.string(f.clientKey);
}
function readItemFields(r, into) {
  const flags = r.u8('flags');
  if (flags & 0xe0) throw badField('flags', `item flags 0x${flags.toString(16)} set reserved bits`);
  into.text = r.string('text');
  into.checked = (flags & 1) !== 0;
  into.remind = (flags & 2) !== 0;
  if (flags & 4) into.due = r.zigzag('due');
  if (flags & 8) into.price = r.zigzag('price');
  if (flags & 16) into.clientKey = r.string('clientKey');
  return into;
}

/** ItemRef: `{id}` or `{tempRef}`. */
function writeRef(w, ref) {
  if (ref.tempRef !== undefined) w.varint(ref.tempRef * 2 + 1);
  else w.varint(ref.id * 2);
}
function readRef(r, field) {
  const v = r.varint(field);
  if (typeof v === 'bigint') return (v & 1n) ? { tempRef: v >> 1n } : { id: v >> 1n };
  return v % 2 === 1 ? { tempRef: (v - 1) / 2 } : { id: v / 2 };
}

function writeOptional(w, present, value, write) {
  w.bool(present);
  if (present) write(value);
}

function writeOp(w, op) {
  const code = Opcode[op.op];
  if (code === undefined) throw new RangeError(`unknown operation ${op.op}`);
  w.u8(code);
  if (code === Opcode.INSERT) {
    w.varint(op.tempRef ?? 0).u8(op.where);
    if (op.where === 0) w.varint(op.index);
    else if (op.where === 1) writeRef(w, op.after);
    writeItemFields(w, op);
    return;
  }
  writeRef(w, op.ref);
  writeOpTail(w, code, op);
}
/** The fields after the ref/id, shared by PATCH ops and AppliedOps (where they agree). */
function writeOpTail(w, code, op) {
  switch (code) {
    case Opcode.SET_TEXT: w.string(op.text); break;
    case Opcode.SET_CHECKED: w.bool(op.checked); break;
    case Opcode.SET_DUE: writeOptional(w, op.present, op.due, (v) => w.zigzag(v)); break;
    case Opcode.SET_REMIND: w.bool(op.remind); break;
    case Opcode.SET_PRICE: writeOptional(w, op.present, op.price, (v) => w.zigzag(v)); break;
    case Opcode.MOVE: w.varint(op.toIndex); break;
    case Opcode.SET_KEY: writeOptional(w, op.present, op.clientKey, (v) => w.string(v)); break;
    default: break; // TOGGLE, DELETE: nothing more
  }
}
function readOpTail(r, code, op) {
  switch (code) {
    case Opcode.SET_TEXT: op.text = r.string('text'); break;
    case Opcode.SET_CHECKED: op.checked = r.bool('checked'); break;
    case Opcode.SET_DUE: op.present = r.bool('present'); if (op.present) op.due = r.zigzag('due'); break;
    case Opcode.SET_REMIND: op.remind = r.bool('remind'); break;
    case Opcode.SET_PRICE: op.present = r.bool('present'); if (op.present) op.price = r.zigzag('price'); break;
    case Opcode.MOVE: op.toIndex = r.varint('toIndex'); break;
    case Opcode.SET_KEY: op.present = r.bool('present'); if (op.present) op.clientKey = r.string('clientKey'); break;
    default: break;
  }
  return op;
}
function readOp(r) {
  const code = r.u8('opcode');
  const name = opcodeNames[code];
  if (name === undefined) throw badField('opcode', `unknown opcode ${code}`);
  if (code === Opcode.INSERT) {
    const op = { op: name, tempRef: r.varint('tempRef'), where: r.enumeration('where', 3) };
    if (op.where === 0) op.index = r.varint('index');
    else if (op.where === 1) op.after = readRef(r, 'after');
    return readItemFields(r, op);
  }
  return readOpTail(r, code, { op: name, ref: readRef(r, 'ref') });
}

/** AppliedOp (section 6.14): `{op, id, ...}`; never TOGGLE. */
function writeAppliedOp(w, op) {
  const code = Opcode[op.op];
  if (code === undefined || code === Opcode.TOGGLE) throw new RangeError(`not an applied operation: ${op.op}`);
  w.u8(code).varint(op.id);
  if (code === Opcode.INSERT) { w.varint(op.index); writeItemFields(w, op); } else writeOpTail(w, code, op);
}
function readAppliedOp(r) {
  const code = r.u8('opcode');
  const name = opcodeNames[code];
  if (name === undefined || code === Opcode.TOGGLE) throw badField('opcode', `opcode ${code} is not an applied operation`);
  const op = { op: name, id: r.varint('id') };
  if (code === Opcode.INSERT) { op.index = r.varint('index'); return readItemFields(r, op); }
  return readOpTail(r, code, op);
}

/** ListChange (sections 6.13-6.14). */
function writeChange(w, c) {
  w.varint(c.list).varint(c.revision).u8(c.kind);
  if (c.kind === 1 || c.kind === 2) w.string(c.name).string(c.icon);
  if (c.kind === 4) { w.varint(c.ops.length); for (const op of c.ops) writeAppliedOp(w, op); }
}
function readChange(r) {
  const c = { list: r.varint('list'), revision: r.varint('revision'), kind: r.enumeration('kind', [1, 2, 3, 4, 5]) };
  if (c.kind === 1 || c.kind === 2) { c.name = r.string('name'); c.icon = r.string('icon'); }
  if (c.kind === 4) {
    const n = r.count('ops', 2);
    c.ops = [];
    for (let i = 0; i < n; i++) c.ops.push(readAppliedOp(r));
  }
  return c;
}

function writeArray(w, items, write) {
  w.varint(items.length);
  for (const item of items) write(item);
}
function readArray(r, field, minBytes, read) {
  const n = r.count(field, minBytes);
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = read();
  return out;
}

const STATS_HEAD = ['uptimeSeconds', 'connectionsOpen', 'connectionsTotal', 'connectionsRejected',
  'connectionsIdleClosed', 'connectionsDroppedForOutput', 'readPauses', 'inFlightPauses', 'bytesIn', 'bytesOut'];
const STATS_LATENCY = ['latencyCount', 'latencyP50Micros', 'latencyP90Micros', 'latencyP99Micros',
  'latencyP999Micros', 'latencyMaxMicros', 'lists', 'items'];
const STATS_SYNC = ['syncSubscribers', 'syncChangesPublished', 'syncPushesDelivered', 'syncSubscribersDropped',
  'syncRetainedChanges', 'syncRetainedBytes'];
const STATS_TLS = ['tlsHandshakes', 'tlsNotTLS', 'tlsHandshakeFailures', 'tlsHandshakesTruncated',
  'tlsHandshakeTimeouts', 'tlsRecordErrors', 'tlsOnPlainPort'];
const STATS_USAGE = ['usageLists', 'usageItems', 'usageBytes'];
const STATS_QUOTAS = ['quotaLists', 'quotaItems', 'quotaBytes'];
const STATS_WEB = ['webUpgrades', 'webHandshakesRefused', 'webOriginsRefused', 'webClosedProtocolError',
  'webClosedUnsupportedData', 'webClosedInvalidPayload', 'webClosedMessageTooBig', 'webPingTimeouts'];

// ---- the messages -------------------------------------------------------
// Each entry: name, encode(writer, fields), decode(reader) -> fields.

const T = MessageType;
const requests = new Map();
const responses = new Map();

function define(table, type, name, encode, decode) {
  table.set(type, { type, name, encode, decode });
}

define(requests, T.HELLO, 'HELLO', (w, f) => {
  w.varint(f.minVersion).varint(f.maxVersion).varint(f.features).string(f.clientName);
  if (f.token !== undefined) w.u8(1).string(f.token);
}, (r) => {
  const f = { minVersion: r.varint('minVersion'), maxVersion: r.varint('maxVersion'), features: r.varint('features'), clientName: r.string('clientName') };
  if (r.remaining > 0 && (r.presence(0x01) & 1)) {
    f.token = r.string('token');
    if (new TextEncoder().encode(f.token).length > 8192) {
      throw new ProtocolError(ErrorCode.LIMIT_EXCEEDED, 'token is longer than 8192 bytes', { field: 'token' });
    }
  }
  return f;
});
define(responses, T.HELLO_OK, 'HELLO_OK', (w, f) => {
  w.varint(f.version).varint(f.features).string(f.serverName).varint(f.maxFrameBytes)
    .varint(f.maxPageRows).varint(f.maxTextBytes).varint(f.maxBatchOps);
}, (r) => ({
  version: r.varint('version'), features: r.varint('features'), serverName: r.string('serverName'),
  maxFrameBytes: r.varint('maxFrameBytes'), maxPageRows: r.varint('maxPageRows'),
  maxTextBytes: r.varint('maxTextBytes'), maxBatchOps: r.varint('maxBatchOps'),
}));

define(requests, T.PING, 'PING', (w, f) => { w.bytesField(f.data); }, (r) => {
  const data = r.bytesField('data');
  if (data.length > 1024) throw new ProtocolError(ErrorCode.LIMIT_EXCEEDED, 'PING data is longer than 1024 bytes', { field: 'data' });
  return { data };
});
define(responses, T.PONG, 'PONG', (w, f) => { w.bytesField(f.data); }, (r) => ({ data: r.bytesField('data') }));

define(requests, T.LIST_LISTS, 'LIST_LISTS', () => {}, () => ({}));
define(responses, T.LISTS, 'LISTS', (w, f) => writeArray(w, f.lists, (s) => writeSummary(w, s)),
  (r) => ({ lists: readArray(r, 'count', 6, () => readSummary(r)) }));

define(requests, T.CREATE_LIST, 'CREATE_LIST', (w, f) => { w.string(f.name).string(f.icon); },
  (r) => ({ name: r.string('name'), icon: r.string('icon') }));
define(responses, T.LIST_CREATED, 'LIST', writeSummary, readSummary);

define(requests, T.UPDATE_LIST, 'UPDATE_LIST', (w, f) => {
  w.varint(f.list).u8((f.name !== undefined ? 1 : 0) | (f.icon !== undefined ? 2 : 0));
  if (f.name !== undefined) w.string(f.name);
  if (f.icon !== undefined) w.string(f.icon);
}, (r) => {
  const f = { list: r.varint('list') };
  const p = r.presence(0x03);
  if (p & 1) f.name = r.string('name');
  if (p & 2) f.icon = r.string('icon');
  return f;
});
define(responses, T.LIST_UPDATED, 'LIST', writeSummary, readSummary);

define(requests, T.DELETE_LIST, 'DELETE_LIST', (w, f) => { w.varint(f.list); }, (r) => ({ list: r.varint('list') }));
define(responses, T.LIST_DELETED, 'LIST_DELETED', (w, f) => { w.varint(f.list).varint(f.revision); },
  (r) => ({ list: r.varint('list'), revision: r.varint('revision') }));

define(requests, T.GET_PAGE, 'GET_PAGE', (w, f) => {
  w.varint(f.list).u8(f.filter).u8(f.startKind);
  if (f.startKind === StartKind.KEY) w.string(f.start); else w.varint(f.start);
  w.varint(f.limit);
}, (r) => {
  const f = { list: r.varint('list'), filter: r.enumeration('filter', 3), startKind: r.enumeration('startKind', 3) };
  f.start = f.startKind === StartKind.KEY ? r.string('start') : r.varint('start');
  f.limit = r.varint('limit');
  return f;
});
define(responses, T.PAGE, 'PAGE', (w, f) => {
  w.varint(f.list).varint(f.revision).varint(f.total).varint(f.offset);
  writeArray(w, f.rows, (row) => { w.varint(row.id); writeItemFields(w, row); });
}, (r) => {
  const f = { list: r.varint('list'), revision: r.varint('revision'), total: r.varint('total'), offset: r.varint('offset') };
  f.rows = readArray(r, 'count', 3, () => readItemFields(r, { id: r.varint('id') }));
  return f;
});

define(requests, T.PATCH, 'PATCH', (w, f) => {
  const keyed = f.client !== undefined;
  w.varint(f.list).u8((f.baseRevision !== undefined ? 1 : 0) | (keyed ? 2 : 0));
  if (f.baseRevision !== undefined) w.varint(f.baseRevision);
  if (keyed) w.varint(f.client).varint(f.sequence);
  writeArray(w, f.ops, (op) => writeOp(w, op));
}, (r) => {
  const f = { list: r.varint('list') };
  const p = r.presence(0x03);
  if (p & 1) f.baseRevision = r.varint('baseRevision');
  if (p & 2) { f.client = r.varint('client'); f.sequence = r.varint('sequence'); }
  f.ops = readArray(r, 'ops', 2, () => readOp(r));
  return f;
});
define(responses, T.PATCH_OK, 'PATCH_OK', (w, f) => {
  w.varint(f.list).varint(f.revision);
  writeArray(w, f.pairs, (p) => { w.varint(p.tempRef).varint(p.id); });
}, (r) => ({
  list: r.varint('list'), revision: r.varint('revision'),
  pairs: readArray(r, 'count', 2, () => ({ tempRef: r.varint('tempRef'), id: r.varint('id') })),
}));

define(requests, T.SUBSCRIBE, 'SUBSCRIBE', (w, f) => {
  w.u8(f.scope);
  writeArray(w, f.lists, (e) => {
    w.varint(e.list);
    if (e.revision !== undefined) w.u8(1).varint(e.revision); else w.u8(0);
  });
}, (r) => ({
  scope: r.enumeration('scope', 2),
  lists: readArray(r, 'count', 2, () => {
    const e = { list: r.varint('list') };
    if (r.presence(0x01) & 1) e.revision = r.varint('revision');
    return e;
  }),
}));
define(responses, T.SUBSCRIBED, 'SUBSCRIBED', (w, f) => writeArray(w, f.lists, (e) => { w.varint(e.list).varint(e.revision).u8(e.status); }),
  (r) => ({ lists: readArray(r, 'count', 3, () => ({ list: r.varint('list'), revision: r.varint('revision'), status: r.enumeration('status', 4) })) }));

define(requests, T.UNSUBSCRIBE, 'UNSUBSCRIBE', (w, f) => { w.u8(f.scope); writeArray(w, f.lists, (id) => w.varint(id)); },
  (r) => ({ scope: r.enumeration('scope', 2), lists: readArray(r, 'count', 1, () => r.varint('list')) }));
define(responses, T.UNSUBSCRIBED, 'UNSUBSCRIBED', () => {}, () => ({}));

define(requests, T.CHANGES_SINCE, 'CHANGES_SINCE', (w, f) => { w.varint(f.list).varint(f.revision).varint(f.limit); },
  (r) => ({ list: r.varint('list'), revision: r.varint('revision'), limit: r.varint('limit') }));
define(responses, T.CHANGES, 'CHANGES', (w, f) => { w.varint(f.list).varint(f.revision); writeArray(w, f.changes, (c) => writeChange(w, c)); },
  (r) => ({ list: r.varint('list'), revision: r.varint('revision'), changes: readArray(r, 'count', 3, () => readChange(r)) }));

define(responses, T.CHANGE, 'CHANGE', writeChange, readChange);
define(responses, T.SUBSCRIPTION_DROPPED, 'SUBSCRIPTION_DROPPED', (w, f) => { w.u8(f.reason).string(f.message); },
  (r) => ({ reason: r.u8('reason'), message: r.string('message') }));

define(requests, T.EXPORT, 'EXPORT', (w, f) => {
  w.u8(f.action);
  if (f.action === 0) { w.varint(f.chunkBytes); writeArray(w, f.lists, (id) => w.varint(id)); }
  if (f.action === 1) w.varint(f.sequence);
}, (r) => {
  const f = { action: r.enumeration('action', 3) };
  if (f.action === 0) { f.chunkBytes = r.varint('chunkBytes'); f.lists = readArray(r, 'count', 1, () => r.varint('list')); }
  if (f.action === 1) f.sequence = r.varint('sequence');
  return f;
});
define(responses, T.EXPORT_CHUNK, 'EXPORT_CHUNK', (w, f) => {
  w.varint(f.sequence).u8(f.status).varint(f.listCount).varint(f.itemCount).varint(f.itemsWritten).varint(f.rawBytes).bytesField(f.data);
}, (r) => ({
  sequence: r.varint('sequence'), status: r.enumeration('status', 3), listCount: r.varint('listCount'),
  itemCount: r.varint('itemCount'), itemsWritten: r.varint('itemsWritten'), rawBytes: r.varint('rawBytes'), data: r.bytesField('data'),
}));

define(requests, T.IMPORT, 'IMPORT', (w, f) => {
  w.u8(f.action);
  if (f.action === 0) w.u8(f.mode);
  if (f.action === 1) w.varint(f.sequence).bytesField(f.data);
}, (r) => {
  const f = { action: r.enumeration('action', 4) };
  if (f.action === 0) f.mode = r.enumeration('mode', 2);
  if (f.action === 1) { f.sequence = r.varint('sequence'); f.data = r.bytesField('data'); }
  return f;
});
define(responses, T.IMPORT_OK, 'IMPORT_OK', (w, f) => {
  w.u8(f.status).varint(f.sequence).varint(f.rawBytes).varint(f.lists).varint(f.items).varint(f.deleted);
  writeArray(w, f.pairs, (p) => { w.varint(p.from).varint(p.to); });
}, (r) => ({
  status: r.enumeration('status', 4), sequence: r.varint('sequence'), rawBytes: r.varint('rawBytes'),
  lists: r.varint('lists'), items: r.varint('items'), deleted: r.varint('deleted'),
  pairs: readArray(r, 'count', 2, () => ({ from: r.varint('from'), to: r.varint('to') })),
}));

// `options` is optional: absent or 0, the body is empty (as before options existed).
define(requests, T.STATS, 'STATS', (w, f) => { if (f.options) w.u8(f.options); }, (r) => {
  if (r.remaining === 0) return {};
  const options = r.u8('options');
  return options ? { options } : {};
});
define(responses, T.STATS_REPORT, 'STATS_REPORT', (w, f) => {
  for (const k of STATS_HEAD) w.varint(f[k]);
  writeArray(w, f.requests, (t) => { w.u8(t.type).varint(t.requests).varint(t.errors); });
  writeArray(w, f.errors, (c) => { w.varint(c.code).varint(c.count); });
  for (const k of STATS_LATENCY) w.varint(f[k]);
  const log = f.logLastLSN !== undefined, snap = f.snapshotLSN !== undefined;
  const sync = f.syncSubscribers !== undefined, tls = f.tlsHandshakes !== undefined, web = f.webUpgrades !== undefined;
  const usage = f.usageLists !== undefined;
  w.u8((log ? 1 : 0) | (snap ? 2 : 0) | (sync ? 4 : 0) | (tls ? 8 : 0) | (web ? 16 : 0) | (usage ? 32 : 0));
  if (log) w.varint(f.logLastLSN).varint(f.logDurableLSN).varint(f.logSegments).bool(f.logFailed);
  if (snap) w.varint(f.snapshotLSN).zigzag(f.snapshotTime).varint(f.snapshotBytes);
  if (sync) for (const k of STATS_SYNC) w.varint(f[k]);
  if (tls) for (const k of STATS_TLS) w.varint(f[k]);
  if (web) for (const k of STATS_WEB) w.varint(f[k]);
  if (usage) {
    for (const k of STATS_USAGE) w.varint(f[k]);
    w.u8(STATS_QUOTAS.reduce((bits, k, i) => bits | (f[k] !== undefined ? 1 << i : 0), 0));
    for (const k of STATS_QUOTAS) if (f[k] !== undefined) w.varint(f[k]);
  }
}, (r) => {
  const f = {};
  for (const k of STATS_HEAD) f[k] = r.varint(k);
  f.requests = readArray(r, 'typeCount', 3, () => ({ type: r.u8('type'), requests: r.varint('requests'), errors: r.varint('errors') }));
  f.errors = readArray(r, 'codeCount', 2, () => ({ code: r.varint('code'), count: r.varint('count') }));
  for (const k of STATS_LATENCY) f[k] = r.varint(k);
  const p = r.presence(0x3f);
  if (p & 1) { f.logLastLSN = r.varint('logLastLSN'); f.logDurableLSN = r.varint('logDurableLSN'); f.logSegments = r.varint('logSegments'); f.logFailed = r.bool('logFailed'); }
  if (p & 2) { f.snapshotLSN = r.varint('snapshotLSN'); f.snapshotTime = r.zigzag('snapshotTime'); f.snapshotBytes = r.varint('snapshotBytes'); }
  if (p & 4) for (const k of STATS_SYNC) f[k] = r.varint(k);
  if (p & 8) for (const k of STATS_TLS) f[k] = r.varint(k);
  if (p & 16) for (const k of STATS_WEB) f[k] = r.varint(k);
  if (p & 32) {
    for (const k of STATS_USAGE) f[k] = r.varint(k);
    const q = r.presence(0x07, 'quotaPresence');
    STATS_QUOTAS.forEach((k, i) => { if (q & (1 << i)) f[k] = r.varint(k); });
  }
  return f;
});

define(responses, T.ERROR, 'ERROR', (w, f) => {
  w.varint(f.code).u8((f.field !== undefined ? 1 : 0) | (f.revision !== undefined ? 2 : 0)
    | (f.retryAfterMs !== undefined ? 4 : 0)).string(f.message);
  if (f.field !== undefined) w.string(f.field);
  if (f.revision !== undefined) w.varint(f.revision);
  if (f.retryAfterMs !== undefined) w.varint(f.retryAfterMs);
}, (r) => {
  const f = { code: r.varint('code') };
  const p = r.presence(0x07);
  f.message = r.string('message');
  if (p & 1) f.field = r.string('field');
  if (p & 2) f.revision = r.varint('revision');
  if (p & 4) f.retryAfterMs = r.varint('retryAfterMs');
  return f;
});

/** `"request"` for frames a client sends, `"response"` for frames a server sends. */
function table(direction) {
  if (direction === 'request') return requests;
  if (direction === 'response') return responses;
  throw new RangeError(`direction must be "request" or "response", got ${direction}`);
}

/** The SPEC's name of a message type in a direction ("LIST" for 0x91 and 0x92), or undefined. */
export function messageName(type, direction) {
  return table(direction).get(type)?.name;
}

/** Encodes a message body. */
export function encodeBody(type, fields, direction) {
  const codec = table(direction).get(type);
  if (codec === undefined) throw new RangeError(`no ${direction} message of type 0x${type.toString(16)}`);
  const w = new Writer();
  codec.encode(w, fields ?? {});
  return w.finish();
}

/** Decodes a (decompressed) message body; throws `ProtocolError` with the SPEC's code and field. */
export function decodeBody(type, body, direction) {
  const codec = table(direction).get(type);
  if (codec === undefined) {
    throw new ProtocolError(ErrorCode.UNKNOWN_MESSAGE, `unknown message type 0x${type.toString(16)}`);
  }
  return codec.decode(new Reader(body));
}
