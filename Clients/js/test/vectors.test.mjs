// Every golden vector of Protocol/vectors, both ways, against the JavaScript
// codec (Protocol/vectors/README.md, "How a test uses them"). The directory is
// read whole, so a new vector is covered at once, and a vector with a key or
// a message this test does not know fails.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, dirname } from 'node:path';
import {
  FrameParser, encodeFrame, encodeFrameCompressed, decodeFrame, messageName, DEFAULT_MAX_FRAME_BYTES,
} from '../checklists.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'Protocol', 'vectors');
const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
const vectors = files.map((f) => ({ file: f, ...JSON.parse(readFileSync(join(dir, f), 'utf8')) }));

const KNOWN_KEYS = new Set(['file', 'name', 'description', 'direction', 'hex', 'frame', 'message', 'fields', 'error',
  'maxFrameBytes', 'encodeCheck', 'canonicalHex', 'inflatedBodyBytes', 'measurement']);
/** Messages whose `data` field is `bytes` (hex in the vectors, Uint8Array in the codec). */
const BYTES_DATA = new Set(['PING', 'PONG', 'EXPORT_CHUNK', 'IMPORT']);

const fromHex = (hex) => Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16));
const toHex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

function toCodec(message, fields) {
  return BYTES_DATA.has(message) && 'data' in fields ? { ...fields, data: fromHex(fields.data) } : fields;
}
function toVector(message, fields) {
  return BYTES_DATA.has(message) && fields.data instanceof Uint8Array ? { ...fields, data: toHex(fields.data) } : fields;
}

function parseOne(hex, maxFrameBytes) {
  const parser = new FrameParser({ maxFrameBytes });
  parser.push(fromHex(hex));
  const frame = parser.next();
  assert.ok(frame, 'a whole frame');
  assert.equal(parser.buffered, 0, 'the vector is exactly one frame');
  return frame;
}

test('the vectors directory holds vectors', () => {
  assert.ok(vectors.length >= 100, `only ${vectors.length} vectors in ${dir}`);
});

for (const v of vectors) {
  test(`vector ${v.name}`, async () => {
    assert.equal(v.file, `${v.name}.json`);
    for (const key of Object.keys(v)) assert.ok(KNOWN_KEYS.has(key), `unknown vector key "${key}": teach this test what it means`);
    assert.ok(v.direction === 'request' || v.direction === 'response', `direction ${v.direction}`);
    assert.ok('fields' in v || 'error' in v, 'a vector has fields or an error');
    const maxFrameBytes = v.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    const bytes = fromHex(v.hex);

    // Every strict prefix asks for more bytes (or, for a wrong length, is refused once 4 bytes are in).
    for (let n = 0; n < bytes.length; n++) {
      const parser = new FrameParser({ maxFrameBytes });
      parser.push(bytes.subarray(0, n));
      if (v.error?.closesConnection && n >= 4) {
        assert.throws(() => parser.next(), (e) => e.code === v.error.code && e.closesConnection);
      } else {
        assert.equal(parser.next(), null, `prefix of ${n} bytes`);
      }
    }

    if (v.error?.closesConnection) {
      const parser = new FrameParser({ maxFrameBytes });
      parser.push(bytes);
      assert.throws(() => parser.next(), (e) => e.code === v.error.code && e.codeName === v.error.name && e.closesConnection);
      return;
    }

    const frame = parseOne(v.hex, maxFrameBytes);
    assert.deepEqual({ type: frame.type, flags: frame.flags, request: frame.request }, v.frame);

    if (v.error) {
      await assert.rejects(decodeFrame(frame, { direction: v.direction, maxFrameBytes }), (e) => {
        assert.equal(e.code, v.error.code, e.message);
        assert.equal(e.codeName, v.error.name);
        assert.equal(e.field, v.error.field, e.message);
        assert.equal(e.closesConnection, false);
        return true;
      });
      return;
    }

    assert.equal(messageName(frame.type, v.direction), v.message, `message type 0x${frame.type.toString(16)} unknown or misnamed`);
    const decoded = await decodeFrame(frame, { direction: v.direction, maxFrameBytes });
    assert.equal(decoded.message, v.message);
    assert.deepEqual(toVector(v.message, decoded.fields), v.fields);

    const fields = toCodec(v.message, v.fields);
    switch (v.encodeCheck ?? 'exact') {
      case 'exact':
        assert.equal(toHex(encodeFrame(v.frame.type, v.frame.request, fields, v.direction)), v.hex);
        break;
      case 'canonical':
        assert.equal(toHex(encodeFrame(v.frame.type, v.frame.request, fields, v.direction)), v.canonicalHex);
        break;
      case 'roundtrip': {
        assert.equal(v.frame.flags, 1);
        const packed = await encodeFrameCompressed(v.frame.type, v.frame.request, fields, v.direction);
        const again = parseOne(toHex(packed), maxFrameBytes);
        assert.equal(again.flags, 1, 'a body this large is sent compressed');
        const redecoded = await decodeFrame(again, { direction: v.direction, maxFrameBytes });
        assert.deepEqual(toVector(v.message, redecoded.fields), v.fields);
        assert.equal(toHex(encodeFrame(v.frame.type, v.frame.request, fields, v.direction)).length - 20, v.inflatedBodyBytes * 2);
        break;
      }
      default:
        assert.fail(`unknown encodeCheck ${v.encodeCheck}`);
    }
  });
}

for (const direction of ['request', 'response']) {
  test(`all ${direction} vectors concatenated parse as consecutive frames, whole and one byte at a time`, () => {
    const mine = vectors.filter((v) => v.direction === direction && !v.error?.closesConnection && !v.maxFrameBytes);
    const stream = fromHex(mine.map((v) => v.hex).join(''));
    for (const step of [stream.length, 1, 7]) {
      const parser = new FrameParser();
      const seen = [];
      for (let at = 0; at < stream.length; at += step) {
        parser.push(stream.subarray(at, at + step));
        for (let f = parser.next(); f; f = parser.next()) seen.push(f);
      }
      assert.equal(seen.length, mine.length);
      seen.forEach((f, i) => assert.equal(f.request, mine[i].frame.request));
    }
  });
}
