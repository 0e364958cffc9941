// Checklists wire protocol v1: framing (Protocol/SPEC.md section 1). A frame
// parser for a byte stream that arrives in pieces of any size, frame encoding,
// and COMPRESSED bodies (zlib, RFC 1950) through the platform's
// CompressionStream / DecompressionStream("deflate").

import { ProtocolError, ErrorCode, badField, Writer } from './wire.js';
import { MessageType, encodeBody, decodeBody, messageName } from './messages.js';

export const HEADER_BYTES = 10;
export const DEFAULT_MAX_FRAME_BYTES = 4194304;
export const FLAG_COMPRESSED = 1;
/** A sender compresses a body only from this size on (section 1). */
export const COMPRESS_MIN_BYTES = 1024;

/**
 * Cuts a byte stream into frames. `push` bytes as they arrive, then call
 * `next()` until it returns null (more bytes needed). A wrong `length` throws
 * a `ProtocolError` with `closesConnection` as soon as the 4-byte prefix is in,
 * before anything is allocated for the frame.
 */
export class FrameParser {
  constructor({ maxFrameBytes = DEFAULT_MAX_FRAME_BYTES } = {}) {
    this.maxFrameBytes = maxFrameBytes;
    this.buffer = new Uint8Array(0);
    this.start = 0;
    this.end = 0;
  }

  /** Appends bytes (Uint8Array or ArrayBuffer). */
  push(chunk) {
    const bytes = chunk instanceof Uint8Array ? chunk : new Uint8Array(chunk);
    if (this.end + bytes.length > this.buffer.length) {
      const live = this.end - this.start;
      if (live + bytes.length <= this.buffer.length) {
        this.buffer.copyWithin(0, this.start, this.end);
      } else {
        const grown = new Uint8Array(Math.max(live + bytes.length, this.buffer.length * 2, 4096));
        grown.set(this.buffer.subarray(this.start, this.end));
        this.buffer = grown;
      }
      this.start = 0;
      this.end = live;
    }
    this.buffer.set(bytes, this.end);
    this.end += bytes.length;
  }

  /** Bytes received and not yet returned as a frame. */
  get buffered() { return this.end - this.start; }

  /** The next whole frame `{type, flags, request, body}` (body is a copy), or null. */
  next() {
    const available = this.end - this.start;
    if (available < 4) return null;
    const b = this.buffer;
    const s = this.start;
    const length = ((b[s] << 24) >>> 0) + (b[s + 1] << 16) + (b[s + 2] << 8) + b[s + 3];
    if (length < 6) {
      throw new ProtocolError(ErrorCode.MALFORMED_FRAME, `frame length ${length} is less than 6`, { closesConnection: true });
    }
    if (length > this.maxFrameBytes) {
      throw new ProtocolError(ErrorCode.FRAME_TOO_LARGE, `frame length ${length} is more than ${this.maxFrameBytes}`, { closesConnection: true });
    }
    if (available < 4 + length) return null;
    const frame = {
      type: b[s + 4],
      flags: b[s + 5],
      request: ((b[s + 6] << 24) >>> 0) + (b[s + 7] << 16) + (b[s + 8] << 8) + b[s + 9],
      body: b.slice(s + HEADER_BYTES, s + 4 + length),
    };
    this.start += 4 + length;
    if (this.start === this.end) { this.start = 0; this.end = 0; }
    return frame;
  }
}

/** A whole frame: header and `body` (already encoded, possibly compressed). */
export function frameBytes(type, flags, request, body) {
  const w = new Writer(HEADER_BYTES + body.length);
  w.u32(body.length + 6).u8(type).u8(flags).u32(request >>> 0).raw(body);
  return w.finish();
}

/** Encodes one uncompressed frame of a message. */
export function encodeFrame(type, request, fields, direction = 'request') {
  return frameBytes(type, 0, request, encodeBody(type, fields, direction));
}

/**
 * Encodes one frame, compressing its body when section 1 allows it: at least
 * 1024 bytes, the compressed form smaller, and never HELLO/HELLO_OK.
 */
export async function encodeFrameCompressed(type, request, fields, direction = 'request') {
  const body = encodeBody(type, fields, direction);
  if (body.length >= COMPRESS_MIN_BYTES && type !== MessageType.HELLO && type !== MessageType.HELLO_OK) {
    const packed = await deflate(body);
    if (packed.length < body.length) return frameBytes(type, FLAG_COMPRESSED, request, packed);
  }
  return frameBytes(type, 0, request, body);
}

/**
 * Decodes a parsed frame in section 1's order: flags (unknown bits, then a
 * compression the peer was not allowed to send), inflating, type, body.
 * Resolves to `{type, flags, request, message, fields}`; rejects with the
 * `ProtocolError` a receiver must produce.
 *
 * Options: `direction` ("response": frames from a server, the default;
 * "request": frames from a client), `maxFrameBytes`, `compressionAllowed`
 * (whether the peer may send COMPRESSED bodies here; default true).
 */
export async function decodeFrame(frame, { direction = 'response', maxFrameBytes = DEFAULT_MAX_FRAME_BYTES, compressionAllowed = true } = {}) {
  const body = await inflateIfNeeded(frame, { maxFrameBytes, compressionAllowed });
  return decoded(frame, body, direction);
}

/** `decodeFrame` for an uncompressed frame, synchronously (throws for a COMPRESSED one). */
export function decodeFrameSync(frame, { direction = 'response' } = {}) {
  checkFlags(frame, true);
  if (frame.flags & FLAG_COMPRESSED) throw new Error('decodeFrameSync: the frame is compressed; use decodeFrame');
  return decoded(frame, frame.body, direction);
}

function decoded(frame, body, direction) {
  const fields = decodeBody(frame.type, body, direction);
  return { type: frame.type, flags: frame.flags, request: frame.request, message: messageName(frame.type, direction), fields };
}

function checkFlags(frame, compressionAllowed) {
  if (frame.flags & ~FLAG_COMPRESSED) throw badField('flags', `unknown frame flags 0x${frame.flags.toString(16)}`);
  if (frame.flags & FLAG_COMPRESSED) {
    if (frame.type === MessageType.HELLO || frame.type === MessageType.HELLO_OK) {
      throw badField('flags', 'HELLO and HELLO_OK are never compressed');
    }
    if (!compressionAllowed) throw badField('flags', 'a compressed body the peer was not allowed to send');
  }
}

async function inflateIfNeeded(frame, { maxFrameBytes, compressionAllowed }) {
  checkFlags(frame, compressionAllowed);
  if (!(frame.flags & FLAG_COMPRESSED)) return frame.body;
  return inflate(frame.body, maxFrameBytes - 6);
}

// ---- zlib through the platform's streams --------------------------------

async function pump(stream, input, limit) {
  const writer = stream.writable.getWriter();
  writer.write(input).catch(() => {});
  writer.close().catch(() => {});
  const reader = stream.readable.getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > limit) {
      reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) { out.set(c, at); at += c.length; }
  return out;
}

/** zlib-compresses bytes (RFC 1950). */
export async function deflate(bytes) {
  return pump(new CompressionStream('deflate'), bytes, Infinity);
}

async function inflateOnce(bytes, limit) {
  try {
    const out = await pump(new DecompressionStream('deflate'), bytes, limit);
    if (out === null) return { tooLarge: true };
    return { out };
  } catch {
    return { failed: true };
  }
}

let ignoresTrailingBytes; // does this platform's DecompressionStream accept bytes after the stream's end?

async function platformIgnoresTrailingBytes() {
  if (ignoresTrailingBytes === undefined) {
    const probe = await deflate(new Uint8Array([1]));
    const withJunk = new Uint8Array(probe.length + 1);
    withJunk.set(probe);
    ignoresTrailingBytes = !(await inflateOnce(withJunk, 64)).failed;
  }
  return ignoresTrailingBytes;
}

/**
 * Inflates a COMPRESSED body: `BAD_FIELD body` unless it is exactly one zlib
 * stream (not cut short, no bytes after its end), `FRAME_TOO_LARGE` when it
 * inflates past `limit` bytes (reading stops there).
 */
export async function inflate(bytes, limit) {
  const result = await inflateOnce(bytes, limit);
  if (result.tooLarge) {
    throw new ProtocolError(ErrorCode.FRAME_TOO_LARGE, `compressed body inflates past ${limit} bytes`);
  }
  if (result.failed) throw badField('body', 'the compressed body is not a valid zlib stream');
  // Where the platform does not refuse bytes after the end of the stream (Node),
  // a body is exactly one stream only if it is incomplete without its last byte.
  if (bytes.length > 0 && (await platformIgnoresTrailingBytes())) {
    const shorter = await inflateOnce(bytes.subarray(0, bytes.length - 1), limit);
    if (!shorter.failed) throw badField('body', 'bytes after the end of the zlib stream');
  }
  return result.out;
}
