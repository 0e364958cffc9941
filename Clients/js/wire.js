// Checklists wire protocol v1: the body encoding of Protocol/SPEC.md section 3
// (varints, zigzag, strings, presence masks, counts) and the protocol's errors
// (section 7). Pure functions over bytes; no I/O.

/** Error codes of SPEC.md section 7, by name. */
export const ErrorCode = Object.freeze({
  MALFORMED_FRAME: 1, FRAME_TOO_LARGE: 2, UNKNOWN_MESSAGE: 3, BAD_FIELD: 4,
  NOT_FOUND: 5, CONFLICT: 6, LIMIT_EXCEEDED: 7, NOT_AUTHENTICATED: 8,
  UNSUPPORTED_VERSION: 9, INTERNAL_ERROR: 10, HELLO_REQUIRED: 11, BAD_STATE: 12,
  RESYNC_REQUIRED: 13, SHUTTING_DOWN: 14, OVERLOADED: 15, DUPLICATE_KEY: 16,
  UNAVAILABLE: 17, RATE_LIMITED: 18, QUOTA_EXCEEDED: 19,
});

const codeNames = new Map(Object.entries(ErrorCode).map(([name, code]) => [code, name]));

/** The name of an error code ("BAD_FIELD"), or "CODE_<n>" for one this client does not know. */
export function errorName(code) {
  return codeNames.get(code) ?? `CODE_${code}`;
}

/**
 * A protocol error: either found while decoding bytes (a local `ProtocolError`
 * with the code a receiver must produce), or an `ERROR` frame the server sent
 * (`fromServer` true, with its `message`, `field` and `revision`).
 */
export class ProtocolError extends Error {
  constructor(code, message, { field, revision, retryAfterMs, closesConnection = false, fromServer = false } = {}) {
    super(`${errorName(code)}${field !== undefined ? ` ${field}` : ''}: ${message}`);
    this.name = 'ProtocolError';
    this.code = code;
    this.codeName = errorName(code);
    this.serverMessage = message;
    if (field !== undefined) this.field = field;
    if (revision !== undefined) this.revision = revision;
    if (retryAfterMs !== undefined) this.retryAfterMs = retryAfterMs; // RATE_LIMITED: wait this long before sending again
    this.closesConnection = closesConnection;
    this.fromServer = fromServer;
  }
}

/** `BAD_FIELD` naming `field`. */
export function badField(field, message = `bad ${field}`) {
  return new ProtocolError(ErrorCode.BAD_FIELD, message, { field });
}

const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const utf8Encoder = new TextEncoder();
const TWO_64 = 1n << 64n;

/** Reads a body field by field; every failure is `BAD_FIELD` naming the field. */
export class Reader {
  constructor(bytes, start = 0, end = bytes.length) {
    this.bytes = bytes;
    this.pos = start;
    this.end = end;
  }

  get remaining() { return this.end - this.pos; }

  u8(field) {
    if (this.pos >= this.end) throw badField(field, `${field} runs past the end of the body`);
    return this.bytes[this.pos++];
  }

  /** A u8 enumeration whose values are 0 ..< `count` (or in the array `allowed`). */
  enumeration(field, allowed) {
    const value = this.u8(field);
    const ok = typeof allowed === 'number' ? value < allowed : allowed.includes(value);
    if (!ok) throw badField(field, `${field} ${value} is out of range`);
    return value;
  }

  /** An unsigned LEB128 varint: a Number when it is at most 2^53-1, a BigInt above. */
  varint(field) {
    const start = this.pos;
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw badField(field, `${field} runs past the end of the body`);
      const byte = this.bytes[this.pos++];
      if (i === 9 && byte > 1) throw badField(field, `${field} does not fit in 64 bits`);
      if (i >= 7) return this.#bigVarint(start, field);
      value += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return value;
      scale *= 128;
    }
    throw badField(field, `${field} is longer than 10 bytes`);
  }

  #bigVarint(start, field) {
    this.pos = start;
    let value = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw badField(field, `${field} runs past the end of the body`);
      const byte = this.bytes[this.pos++];
      if (i === 9 && byte > 1) throw badField(field, `${field} does not fit in 64 bits`);
      value |= BigInt(byte & 0x7f) << BigInt(7 * i);
      if ((byte & 0x80) === 0) return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
    }
    throw badField(field, `${field} is longer than 10 bytes`);
  }

  /** A zigzag varint: a signed integer (Number when safe, BigInt otherwise). */
  zigzag(field) {
    const u = this.varint(field);
    if (typeof u === 'number') return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
    const n = (u >> 1n) ^ -(u & 1n);
    return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
  }

  bool(field) {
    const value = this.u8(field);
    if (value > 1) throw badField(field, `${field} must be 0 or 1, got ${value}`);
    return value === 1;
  }

  bytesField(field) {
    const length = this.varint(field);
    if (typeof length !== 'number' || length > this.remaining) {
      throw badField(field, `${field} runs past the end of the body`);
    }
    const out = this.bytes.subarray(this.pos, this.pos + length);
    this.pos += length;
    return out;
  }

  string(field) {
    const raw = this.bytesField(field);
    try {
      return utf8Decoder.decode(raw);
    } catch {
      throw badField(field, `${field} is not valid UTF-8`);
    }
  }

  /** A presence mask whose known bits are `known`; any other bit is `BAD_FIELD presence`. */
  presence(known, field = 'presence') {
    const mask = this.u8(field);
    if ((mask & ~known) !== 0) throw badField(field, `unknown presence bits 0x${mask.toString(16)}`);
    return mask;
  }

  /** A count of elements of at least `minBytes` each, checked against the bytes left. */
  count(field, minBytes) {
    const n = this.varint(field);
    if (typeof n !== 'number' || n * minBytes > this.remaining) {
      throw badField(field, `${field} ${n} is more than the body can hold`);
    }
    return n;
  }
}

/** Builds a body; grows as needed. */
export class Writer {
  constructor(capacity = 64) {
    this.bytes = new Uint8Array(capacity);
    this.length = 0;
  }

  #reserve(n) {
    if (this.length + n <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < this.length + n) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }

  u8(value) {
    this.#reserve(1);
    this.bytes[this.length++] = value & 0xff;
    return this;
  }

  u32(value) {
    this.#reserve(4);
    const b = this.bytes;
    b[this.length++] = (value >>> 24) & 0xff;
    b[this.length++] = (value >>> 16) & 0xff;
    b[this.length++] = (value >>> 8) & 0xff;
    b[this.length++] = value & 0xff;
    return this;
  }

  /** An unsigned varint (shortest form) of a Number (integer, 0 ..< 2^53) or a BigInt (< 2^64). */
  varint(value) {
    this.#reserve(10);
    if (typeof value === 'bigint') {
      if (value < 0n || value >= TWO_64) throw new RangeError(`varint out of range: ${value}`);
      while (value >= 0x80n) {
        this.bytes[this.length++] = Number(value & 0x7fn) | 0x80;
        value >>= 7n;
      }
      this.bytes[this.length++] = Number(value);
      return this;
    }
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`varint out of range: ${value}`);
    while (value >= 0x80) {
      this.bytes[this.length++] = (value % 128) | 0x80;
      value = Math.floor(value / 128);
    }
    this.bytes[this.length++] = value;
    return this;
  }

  zigzag(value) {
    if (typeof value === 'bigint') return this.varint(value >= 0n ? value << 1n : ((-value) << 1n) - 1n);
    if (!Number.isSafeInteger(value)) throw new RangeError(`zigzag out of range: ${value}`);
    return value >= 0 ? this.varint(value * 2) : this.varint(BigInt(value) * -2n - 1n);
  }

  bool(value) { return this.u8(value ? 1 : 0); }

  raw(bytes) {
    this.#reserve(bytes.length);
    this.bytes.set(bytes, this.length);
    this.length += bytes.length;
    return this;
  }

  bytesField(bytes) { return this.varint(bytes.length).raw(bytes); }

  string(text) { return this.bytesField(utf8Encoder.encode(text)); }

  /** The bytes written so far (a view, not a copy). */
  finish() { return this.bytes.subarray(0, this.length); }
}

/** UTF-8 byte length of a string (for checking section 4's limits before sending). */
export function utf8Length(text) {
  return utf8Encoder.encode(text).length;
}
