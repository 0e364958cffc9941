#!/usr/bin/env python3
"""Golden vectors for the Checklists wire protocol, version 1.

An independent second implementation of the protocol, written from
Protocol/SPEC.md alone (it shares no code and no structure with the Swift
codec): a reference encoder that turns the meaning of each message (the
"fields" object of a vector) into frame bytes, and a reference decoder that
turns the bytes back into the meaning or into the error the spec prescribes.
Every vector is checked with both before it is written.

Usage:
    python3 Protocol/vectors/generate.py           # (re)write every vector
    python3 Protocol/vectors/generate.py --check   # exit 1 if a file is stale

Python 3 standard library only. The output is deterministic: keys are sorted,
vectors have a fixed order, and compressed bodies are made by the small
fixed-Huffman deflate encoder below rather than by the system zlib (whose
output differs between zlib builds); `zlib` is only used to check them.

The JSON format is described in README.md next to this file.
"""

import json
import os
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MAX_FRAME_BYTES = 4 * 1024 * 1024

# ---------------------------------------------------------------------------
# Section 5: message types and section 7: error codes
# ---------------------------------------------------------------------------

REQUEST_TYPES = {
    "HELLO": 0x01, "PING": 0x02, "LIST_LISTS": 0x10, "CREATE_LIST": 0x11,
    "UPDATE_LIST": 0x12, "DELETE_LIST": 0x13, "GET_PAGE": 0x20, "PATCH": 0x21,
}
# 0x91 and 0x92 are both `LIST` (the answers to CREATE_LIST and UPDATE_LIST).
RESPONSE_TYPES = {
    0x81: "HELLO_OK", 0x82: "PONG", 0x90: "LISTS", 0x91: "LIST", 0x92: "LIST",
    0x93: "LIST_DELETED", 0xA0: "PAGE", 0xA1: "PATCH_OK", 0xFF: "ERROR",
}
ERROR_CODES = {
    1: "MALFORMED_FRAME", 2: "FRAME_TOO_LARGE", 3: "UNKNOWN_MESSAGE", 4: "BAD_FIELD",
    5: "NOT_FOUND", 6: "CONFLICT", 7: "LIMIT_EXCEEDED", 8: "NOT_AUTHENTICATED",
    9: "UNSUPPORTED_VERSION", 10: "INTERNAL_ERROR", 11: "HELLO_REQUIRED",
    12: "BAD_STATE", 13: "RESYNC_REQUIRED", 14: "SHUTTING_DOWN", 15: "OVERLOADED",
}
ERROR_NUMBERS = {name: code for code, name in ERROR_CODES.items()}
OPCODES = {
    "INSERT": 0x01, "SET_TEXT": 0x02, "SET_CHECKED": 0x03, "TOGGLE": 0x04,
    "SET_DUE": 0x05, "SET_REMIND": 0x06, "SET_PRICE": 0x07, "DELETE": 0x08,
    "MOVE": 0x09,
}
OPNAMES = {code: name for name, code in OPCODES.items()}
COMPRESSED = 0x01
PING_MAX_DATA = 1024

# ---------------------------------------------------------------------------
# Section 3: body encoding (encoder side)
# ---------------------------------------------------------------------------


def u8(n):
    assert 0 <= n <= 0xFF
    return bytes([n])


def varint(n):
    assert 0 <= n < 1 << 64, n
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def zigzag(n):
    assert -(1 << 63) <= n < 1 << 63, n
    return varint(((n << 1) ^ (n >> 63)) & ((1 << 64) - 1))


def boolean(b):
    assert isinstance(b, bool)
    return b"\x01" if b else b"\x00"


def string(s):
    raw = s.encode("utf-8")
    return varint(len(raw)) + raw


def byte_run(hex_text):
    raw = bytes.fromhex(hex_text)
    return varint(len(raw)) + raw


def u32be(n):
    assert 0 <= n < 1 << 32
    return n.to_bytes(4, "big")


def frame(msg_type, flags, request, body):
    """Section 1: length (u32) type (u8) flags (u8) request (u32) body."""
    return u32be(6 + len(body)) + u8(msg_type) + u8(flags) + u32be(request) + body


# Shared structures (section 6) ---------------------------------------------

def enc_list_summary(s):
    return (varint(s["id"]) + string(s["name"]) + string(s["icon"]) +
            varint(s["itemCount"]) + varint(s["uncheckedCount"]) + varint(s["revision"]))


def enc_item_ref(ref):
    if "id" in ref:
        return varint(ref["id"] << 1)
    return varint(ref["tempRef"] << 1 | 1)


def enc_item_fields(f):
    flags = ((1 if f["checked"] else 0) | (2 if f["remind"] else 0) |
             (4 if "due" in f else 0) | (8 if "price" in f else 0))
    out = u8(flags) + string(f["text"])
    if "due" in f:
        out += zigzag(f["due"])
    if "price" in f:
        out += zigzag(f["price"])
    return out


def enc_op(op):
    name = op["op"]
    out = u8(OPCODES[name])
    if name == "INSERT":
        out += varint(op["tempRef"]) + u8(op["where"])
        if op["where"] == 0:
            out += varint(op["index"])
        elif op["where"] == 1:
            out += enc_item_ref(op["after"])
        return out + enc_item_fields(op)
    out += enc_item_ref(op["ref"])
    if name == "SET_TEXT":
        out += string(op["text"])
    elif name == "SET_CHECKED":
        out += boolean(op["checked"])
    elif name == "SET_DUE":
        out += boolean(op["present"]) + (zigzag(op["due"]) if op["present"] else b"")
    elif name == "SET_REMIND":
        out += boolean(op["remind"])
    elif name == "SET_PRICE":
        out += boolean(op["present"]) + (zigzag(op["price"]) if op["present"] else b"")
    elif name == "MOVE":
        out += varint(op["toIndex"])
    return out


# Messages (section 6) --------------------------------------------------------

def enc_hello(f):
    return varint(f["minVersion"]) + varint(f["maxVersion"]) + varint(f["features"]) + string(f["clientName"])


def enc_hello_ok(f):
    return (varint(f["version"]) + varint(f["features"]) + string(f["serverName"]) +
            varint(f["maxFrameBytes"]) + varint(f["maxPageRows"]) +
            varint(f["maxTextBytes"]) + varint(f["maxBatchOps"]))


def enc_update_list(f):
    presence = (1 if "name" in f else 0) | (2 if "icon" in f else 0)
    out = varint(f["list"]) + u8(presence)
    if "name" in f:
        out += string(f["name"])
    if "icon" in f:
        out += string(f["icon"])
    return out


def enc_page(f):
    out = (varint(f["list"]) + varint(f["revision"]) + varint(f["total"]) +
           varint(f["offset"]) + varint(len(f["rows"])))
    for row in f["rows"]:
        out += varint(row["id"]) + enc_item_fields(row)
    return out


def enc_patch(f):
    out = varint(f["list"]) + u8(1 if "baseRevision" in f else 0)
    if "baseRevision" in f:
        out += varint(f["baseRevision"])
    out += varint(len(f["ops"]))
    for op in f["ops"]:
        out += enc_op(op)
    return out


def enc_patch_ok(f):
    out = varint(f["list"]) + varint(f["revision"]) + varint(len(f["pairs"]))
    for p in f["pairs"]:
        out += varint(p["tempRef"]) + varint(p["id"])
    return out


def enc_error(f):
    presence = (1 if "field" in f else 0) | (2 if "revision" in f else 0)
    out = varint(f["code"]) + u8(presence) + string(f["message"])
    if "field" in f:
        out += string(f["field"])
    if "revision" in f:
        out += varint(f["revision"])
    return out


ENCODERS = {
    "HELLO": enc_hello,
    "PING": lambda f: byte_run(f["data"]),
    "LIST_LISTS": lambda f: b"",
    "CREATE_LIST": lambda f: string(f["name"]) + string(f["icon"]),
    "UPDATE_LIST": enc_update_list,
    "DELETE_LIST": lambda f: varint(f["list"]),
    "GET_PAGE": lambda f: (varint(f["list"]) + u8(f["filter"]) + u8(f["startKind"]) +
                           varint(f["start"]) + varint(f["limit"])),
    "PATCH": enc_patch,
    "HELLO_OK": enc_hello_ok,
    "PONG": lambda f: byte_run(f["data"]),
    "LISTS": lambda f: varint(len(f["lists"])) + b"".join(enc_list_summary(s) for s in f["lists"]),
    "LIST": enc_list_summary,
    "LIST_DELETED": lambda f: varint(f["list"]) + varint(f["revision"]),
    "PAGE": enc_page,
    "PATCH_OK": enc_patch_ok,
    "ERROR": enc_error,
}

# ---------------------------------------------------------------------------
# Section 3 again, decoder side: the errors the spec prescribes
# ---------------------------------------------------------------------------


class WireError(Exception):
    def __init__(self, code, field=None, closes=False):
        super().__init__(ERROR_CODES[code], field)
        self.code = code
        self.field = field
        self.closes = closes


def bad(field):
    return WireError(ERROR_NUMBERS["BAD_FIELD"], field)


class Reader:
    def __init__(self, data):
        self.data = data
        self.pos = 0

    def remaining(self):
        return len(self.data) - self.pos

    def u8(self, field):
        if self.pos >= len(self.data):
            raise bad(field)
        self.pos += 1
        return self.data[self.pos - 1]

    def varint(self, field):
        value = 0
        for i in range(10):
            b = self.u8(field)
            if i == 9 and b > 1:   # the 10th byte may only be 0x00 or 0x01
                raise bad(field)
            value |= (b & 0x7F) << (7 * i)
            if b & 0x80 == 0:
                return value
        raise bad(field)           # unreachable: a 10th byte >= 0x80 is rejected above

    def zigzag(self, field):
        u = self.varint(field)
        return (u >> 1) ^ -(u & 1)

    def boolean(self, field):
        b = self.u8(field)
        if b > 1:
            raise bad(field)
        return b == 1

    def raw(self, field):
        n = self.varint(field)
        if n > self.remaining():
            raise bad(field)
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def string(self, field):
        try:
            return self.raw(field).decode("utf-8", errors="strict")
        except UnicodeDecodeError:
            raise bad(field)

    def presence(self, known):
        p = self.u8("presence")
        if p & ~known:
            raise bad("presence")
        return p

    def count(self, field, element_min_bytes):
        """Section 3, counts: a count the rest of the body cannot hold is BAD_FIELD."""
        n = self.varint(field)
        if n > self.remaining() // element_min_bytes:
            raise bad(field)
        return n


def dec_list_summary(r):
    return {"id": r.varint("id"), "name": r.string("name"), "icon": r.string("icon"),
            "itemCount": r.varint("itemCount"), "uncheckedCount": r.varint("uncheckedCount"),
            "revision": r.varint("revision")}


def dec_item_ref(r):
    v = r.varint("ref")
    return {"tempRef": v >> 1} if v & 1 else {"id": v >> 1}


def dec_item_fields(r, into):
    flags = r.u8("flags")
    if flags & 0xF0:
        raise bad("flags")
    into["checked"] = bool(flags & 1)
    into["remind"] = bool(flags & 2)
    into["text"] = r.string("text")
    if flags & 4:
        into["due"] = r.zigzag("due")
    if flags & 8:
        into["price"] = r.zigzag("price")
    return into


def dec_op(r):
    code = r.u8("opcode")
    if code not in OPNAMES:
        raise bad("opcode")
    op = {"op": OPNAMES[code]}
    if code == OPCODES["INSERT"]:
        op["tempRef"] = r.varint("tempRef")
        op["where"] = r.u8("where")
        if op["where"] == 0:
            op["index"] = r.varint("index")
        elif op["where"] == 1:
            op["after"] = dec_item_ref(r)
        elif op["where"] != 2:
            raise bad("where")
        return dec_item_fields(r, op)
    op["ref"] = dec_item_ref(r)
    name = op["op"]
    if name == "SET_TEXT":
        op["text"] = r.string("text")
    elif name == "SET_CHECKED":
        op["checked"] = r.boolean("checked")
    elif name == "SET_DUE":
        op["present"] = r.boolean("present")
        if op["present"]:
            op["due"] = r.zigzag("due")
    elif name == "SET_REMIND":
        op["remind"] = r.boolean("remind")
    elif name == "SET_PRICE":
        op["present"] = r.boolean("present")
        if op["present"]:
            op["price"] = r.zigzag("price")
    elif name == "MOVE":
        op["toIndex"] = r.varint("toIndex")
    return op


def dec_hello(r):
    return {"minVersion": r.varint("minVersion"), "maxVersion": r.varint("maxVersion"),
            "features": r.varint("features"), "clientName": r.string("clientName")}


def dec_ping(r):
    data = r.raw("data")
    if len(data) > PING_MAX_DATA:
        raise WireError(ERROR_NUMBERS["LIMIT_EXCEEDED"], "data")
    return {"data": data.hex()}


def dec_update_list(r):
    f = {"list": r.varint("list")}
    p = r.presence(0b11)
    if p & 1:
        f["name"] = r.string("name")
    if p & 2:
        f["icon"] = r.string("icon")
    return f


def dec_get_page(r):
    f = {"list": r.varint("list"), "filter": r.u8("filter")}
    if f["filter"] > 2:
        raise bad("filter")
    f["startKind"] = r.u8("startKind")
    if f["startKind"] > 1:
        raise bad("startKind")
    f["start"] = r.varint("start")
    f["limit"] = r.varint("limit")
    return f


def dec_patch(r):
    f = {"list": r.varint("list")}
    if r.presence(0b1) & 1:
        f["baseRevision"] = r.varint("baseRevision")
    n = r.count("ops", 2)
    f["ops"] = [dec_op(r) for _ in range(n)]
    return f


def dec_hello_ok(r):
    return {"version": r.varint("version"), "features": r.varint("features"),
            "serverName": r.string("serverName"), "maxFrameBytes": r.varint("maxFrameBytes"),
            "maxPageRows": r.varint("maxPageRows"), "maxTextBytes": r.varint("maxTextBytes"),
            "maxBatchOps": r.varint("maxBatchOps")}


def dec_lists(r):
    n = r.count("count", 6)
    return {"lists": [dec_list_summary(r) for _ in range(n)]}


def dec_page(r):
    f = {"list": r.varint("list"), "revision": r.varint("revision"),
         "total": r.varint("total"), "offset": r.varint("offset")}
    n = r.count("count", 3)
    f["rows"] = [dec_item_fields(r, {"id": r.varint("id")}) for _ in range(n)]
    return f


def dec_patch_ok(r):
    f = {"list": r.varint("list"), "revision": r.varint("revision")}
    n = r.count("count", 2)
    f["pairs"] = [{"tempRef": r.varint("tempRef"), "id": r.varint("id")} for _ in range(n)]
    return f


def dec_error(r):
    f = {"code": r.varint("code")}
    p = r.presence(0b11)
    f["message"] = r.string("message")
    if p & 1:
        f["field"] = r.string("field")
    if p & 2:
        f["revision"] = r.varint("revision")
    return f


DECODERS = {
    "HELLO": dec_hello, "PING": dec_ping, "LIST_LISTS": lambda r: {},
    "CREATE_LIST": lambda r: {"name": r.string("name"), "icon": r.string("icon")},
    "UPDATE_LIST": dec_update_list, "DELETE_LIST": lambda r: {"list": r.varint("list")},
    "GET_PAGE": dec_get_page, "PATCH": dec_patch,
    "HELLO_OK": dec_hello_ok, "PONG": lambda r: {"data": r.raw("data").hex()},
    "LISTS": dec_lists, "LIST": dec_list_summary,
    "LIST_DELETED": lambda r: {"list": r.varint("list"), "revision": r.varint("revision")},
    "PAGE": dec_page, "PATCH_OK": dec_patch_ok, "ERROR": dec_error,
}


def inflate(body, limit):
    """Section 1, compression: a zlib stream inflating to at most `limit` bytes."""
    d = zlib.decompressobj()
    try:
        out = d.decompress(body, limit + 1)
    except zlib.error:
        raise bad("body")
    if len(out) > limit:
        raise WireError(ERROR_NUMBERS["FRAME_TOO_LARGE"])
    if not d.eof or d.unused_data:
        raise bad("body")       # truncated, or bytes after the end of the stream
    return out


def parse_frame(data, max_frame_bytes):
    """Section 1. Returns None (need more), or (type, flags, request, body, consumed)."""
    if len(data) < 4:
        return None
    length = int.from_bytes(data[0:4], "big")
    if length < 6:
        raise WireError(ERROR_NUMBERS["MALFORMED_FRAME"], closes=True)
    if length > max_frame_bytes:
        raise WireError(ERROR_NUMBERS["FRAME_TOO_LARGE"], closes=True)
    if len(data) < 4 + length:
        return None
    return data[4], data[5], int.from_bytes(data[6:10], "big"), data[10:4 + length], 4 + length


def decode_frame(direction, msg_type, flags, body, max_frame_bytes):
    """Returns (message name, fields) or raises WireError."""
    if flags & ~COMPRESSED:
        raise bad("flags")
    if flags & COMPRESSED:
        body = inflate(body, max_frame_bytes - 6)
    if direction == "request":
        names = {t: n for n, t in REQUEST_TYPES.items()}
    else:
        names = RESPONSE_TYPES
    if msg_type not in names:
        raise WireError(ERROR_NUMBERS["UNKNOWN_MESSAGE"])
    # Bytes after the last known field are ignored (forward compatibility).
    return names[msg_type], DECODERS[names[msg_type]](Reader(body))


# ---------------------------------------------------------------------------
# RFC 1950/1951: a tiny deterministic zlib encoder (fixed Huffman codes,
# greedy LZ77), so compressed vectors do not depend on the zlib build.
# ---------------------------------------------------------------------------

LENGTH_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59,
               67, 83, 99, 115, 131, 163, 195, 227, 258]
LENGTH_EXTRA = [0] * 8 + [1] * 4 + [2] * 4 + [3] * 4 + [4] * 4 + [5] * 4 + [0]
DIST_BASE = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769,
             1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]
DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10,
              11, 11, 12, 12, 13, 13]


class BitWriter:
    def __init__(self):
        self.out = bytearray()
        self.acc = 0
        self.n = 0

    def bits(self, value, count):           # LSB first (RFC 1951 3.1.1)
        self.acc |= value << self.n
        self.n += count
        while self.n >= 8:
            self.out.append(self.acc & 0xFF)
            self.acc >>= 8
            self.n -= 8

    def huffman(self, code, count):         # Huffman codes go MSB first
        self.bits(int(format(code, "0%db" % count)[::-1], 2), count)

    def flush(self):
        if self.n:
            self.out.append(self.acc & 0xFF)
        self.acc = self.n = 0
        return bytes(self.out)


def fixed_literal(w, sym):                  # RFC 1951 3.2.6
    if sym <= 143:
        w.huffman(0x30 + sym, 8)
    elif sym <= 255:
        w.huffman(0x190 + sym - 144, 9)
    elif sym <= 279:
        w.huffman(sym - 256, 7)
    else:
        w.huffman(0xC0 + sym - 280, 8)


def deflate_fixed(data):
    """zlib stream: header 78 01, one final fixed-Huffman block, Adler-32."""
    w = BitWriter()
    w.bits(1, 1)          # BFINAL
    w.bits(1, 2)          # BTYPE 01: fixed Huffman codes
    chains = {}
    i = 0
    while i < len(data):
        best_len, best_dist = 0, 0
        key = data[i:i + 3]
        if len(key) == 3:
            for cand in reversed(chains.get(key, [])[-32:]):
                if i - cand > 32768:
                    break
                n = 0
                while n < 258 and i + n < len(data) and data[cand + n] == data[i + n]:
                    n += 1
                if n > best_len:
                    best_len, best_dist = n, i - cand
                    if n == 258:
                        break
        if best_len >= 3:
            code = max(c for c in range(29) if LENGTH_BASE[c] <= best_len)
            fixed_literal(w, 257 + code)
            w.bits(best_len - LENGTH_BASE[code], LENGTH_EXTRA[code])
            dcode = max(c for c in range(30) if DIST_BASE[c] <= best_dist)
            w.huffman(dcode, 5)
            w.bits(best_dist - DIST_BASE[dcode], DIST_EXTRA[dcode])
            step = best_len
        else:
            fixed_literal(w, data[i])
            step = 1
        for j in range(i, i + step):
            if j + 3 <= len(data):
                chains.setdefault(data[j:j + 3], []).append(j)
        i += step
    fixed_literal(w, 256)  # end of block
    stream = b"\x78\x01" + w.flush() + zlib.adler32(data).to_bytes(4, "big")
    assert zlib.decompress(stream) == data
    return stream


# ---------------------------------------------------------------------------
# The vectors
# ---------------------------------------------------------------------------

VECTORS = []


def message_type(direction, message, msg_type=None):
    if msg_type is not None:
        return msg_type
    if direction == "request":
        return REQUEST_TYPES[message]
    return {n: t for t, n in sorted(RESPONSE_TYPES.items(), reverse=True)}[message]


def valid(name, description, message, request, fields, direction=None, msg_type=None):
    """A well-formed frame; encoding `fields` gives exactly `hex`."""
    direction = direction or ("request" if message in REQUEST_TYPES else "response")
    t = message_type(direction, message, msg_type)
    data = frame(t, 0, request, ENCODERS[message](fields))
    v = {"name": name, "description": description, "direction": direction,
         "hex": data.hex(), "frame": {"type": t, "flags": 0, "request": request},
         "message": message, "fields": fields}
    VECTORS.append(v)
    return v


def accepted(name, description, message, request, fields, body, direction=None):
    """A non-canonical body that decoders accept: `hex` decodes to `fields`,
    and encoding `fields` gives `canonicalHex`."""
    direction = direction or ("request" if message in REQUEST_TYPES else "response")
    t = message_type(direction, message)
    v = {"name": name, "description": description, "direction": direction,
         "hex": frame(t, 0, request, body).hex(),
         "canonicalHex": frame(t, 0, request, ENCODERS[message](fields)).hex(),
         "encodeCheck": "canonical",
         "frame": {"type": t, "flags": 0, "request": request},
         "message": message, "fields": fields}
    VECTORS.append(v)
    return v


def compressed(name, description, message, request, fields, direction=None):
    """A COMPRESSED frame. Compressed bytes are not unique (zlib builds and
    levels differ), so encoders are only checked by a round trip."""
    direction = direction or ("request" if message in REQUEST_TYPES else "response")
    t = message_type(direction, message)
    body = ENCODERS[message](fields)
    packed = deflate_fixed(body)
    assert len(body) >= 1024 and len(packed) < len(body)
    v = {"name": name, "description": description, "direction": direction,
         "hex": frame(t, COMPRESSED, request, packed).hex(),
         "encodeCheck": "roundtrip", "inflatedBodyBytes": len(body),
         "frame": {"type": t, "flags": COMPRESSED, "request": request},
         "message": message, "fields": fields}
    VECTORS.append(v)
    return v


def malformed(name, description, direction, data, error, field=None, message=None,
              max_frame_bytes=None):
    """Bytes a receiver must refuse with exactly `error` (and `field`)."""
    code = ERROR_NUMBERS[error]
    # Only a wrong `length` loses the framing (section 1): then the connection closes.
    length = int.from_bytes(data[0:4], "big")
    closes = length < 6 or length > (max_frame_bytes or DEFAULT_MAX_FRAME_BYTES)
    v = {"name": name, "description": description, "direction": direction, "hex": data.hex(),
         "error": {"code": code, "name": error, "closesConnection": closes}}
    if field is not None:
        v["error"]["field"] = field
    if len(data) >= 10:
        v["frame"] = {"type": data[4], "flags": data[5], "request": int.from_bytes(data[6:10], "big")}
    if message is not None:
        v["message"] = message
    if max_frame_bytes is not None:
        v["maxFrameBytes"] = max_frame_bytes
    VECTORS.append(v)
    return v


def item(text, checked=False, remind=False, due=None, price=None, **extra):
    f = dict(extra, text=text, checked=checked, remind=remind)
    if due is not None:
        f["due"] = due
    if price is not None:
        f["price"] = price
    return f


def insert(temp_ref, where, text, index=None, after=None, **kw):
    op = {"op": "INSERT", "tempRef": temp_ref, "where": where}
    if where == 0:
        op["index"] = index
    if where == 1:
        op["after"] = after
    op.update(item(text, **kw))
    return op


def ID(n):
    return {"id": n}


def TEMP(n):
    return {"tempRef": n}


# Times used below: 2024-05-01T09:00:00Z and 1969-07-20T20:17:40Z.
MAY_1 = 1714554000
MOON = -14182940


def build():
    # -- 6.1 ------------------------------------------------------------------
    valid("hello", "HELLO offering exactly version 1 and the COMPRESSION feature.",
          "HELLO", 1, {"minVersion": 1, "maxVersion": 1, "features": 1,
                       "clientName": "checklist-cli/1.0"})
    valid("hello-version-range", "HELLO offering versions 1 to 3, no features.",
          "HELLO", 0xFFFFFFFF, {"minVersion": 1, "maxVersion": 3, "features": 0,
                                "clientName": "Checklists iOS/2.0"})
    valid("hello-ok", "HELLO_OK choosing version 1 and announcing the default limits.",
          "HELLO_OK", 1, {"version": 1, "features": 1, "serverName": "checklistd/1.0",
                          "maxFrameBytes": 4194304, "maxPageRows": 1000,
                          "maxTextBytes": 4096, "maxBatchOps": 1000})
    # -- 6.2 ------------------------------------------------------------------
    valid("ping", "PING with 6 bytes of data; the request id shows the big-endian byte order.",
          "PING", 0x01020304, {"data": "00010203feff"})
    valid("ping-empty", "PING with empty data.", "PING", 2, {"data": ""})
    valid("pong", "PONG echoing the data of `ping`.", "PONG", 0x01020304, {"data": "00010203feff"})
    # -- 6.3 ------------------------------------------------------------------
    valid("list-lists", "LIST_LISTS: empty body.", "LIST_LISTS", 3, {})
    lists = [
        {"id": 1, "name": "Birthdays", "icon": "Birthdays", "itemCount": 0,
         "uncheckedCount": 0, "revision": 1},
        {"id": 2, "name": "Groceries", "icon": "Groceries", "itemCount": 12,
         "uncheckedCount": 5, "revision": 140},
        {"id": 5, "name": "Café ☕ 日本", "icon": "No Icon", "itemCount": 3,
         "uncheckedCount": 0, "revision": 9},
    ]
    valid("lists", "LISTS with three summaries ordered by id; a UTF-8 name; a 2-byte revision.",
          "LISTS", 3, {"lists": lists})
    valid("lists-empty", "LISTS with no lists.", "LISTS", 4, {"lists": []})
    icons = ["Appointments", "Birthdays", "Chores", "Drinks", "Folder", "Groceries",
             "Inbox", "Photos", "Trips", "No Icon"]
    many = [{"id": i, "name": "List number %d" % i, "icon": icons[i % len(icons)],
             "itemCount": i * 3, "uncheckedCount": i, "revision": i * 7}
            for i in range(1, 41)]
    compressed("lists-compressed",
               "LISTS with 40 summaries (a body of at least 1024 bytes) sent COMPRESSED: the body "
               "is a zlib stream. zlib output differs between zlib versions and levels, so check "
               "decode(hex) == fields and that encoding with compression then decoding gives "
               "fields again; do not compare re-encoded bytes with `hex`.",
               "LISTS", 5, {"lists": many})
    # -- 6.4 / 6.5 / 6.6 ----------------------------------------------------------
    valid("create-list", "CREATE_LIST with a name and an icon.", "CREATE_LIST", 6,
          {"name": "Groceries", "icon": "Groceries"})
    valid("create-list-utf8", "CREATE_LIST whose name is multi-byte UTF-8 (string lengths count bytes).",
          "CREATE_LIST", 7, {"name": "Café ☕ 日本 🎂", "icon": "No Icon"})
    valid("list-created", "LIST (0x91) answering CREATE_LIST: the new list at revision 1.",
          "LIST", 6, {"id": 7, "name": "Groceries", "icon": "Groceries", "itemCount": 0,
                      "uncheckedCount": 0, "revision": 1}, msg_type=0x91)
    valid("update-list", "UPDATE_LIST changing name and icon (presence 0x03).", "UPDATE_LIST", 8,
          {"list": 7, "name": "Weekly groceries", "icon": "Trips"})
    valid("update-list-name-only", "UPDATE_LIST changing only the name (presence 0x01).",
          "UPDATE_LIST", 9, {"list": 7, "name": "Shopping"})
    valid("update-list-icon-only", "UPDATE_LIST changing only the icon (presence 0x02).",
          "UPDATE_LIST", 10, {"list": 7, "icon": "No Icon"})
    valid("update-list-nothing", "UPDATE_LIST with neither field (presence 0x00): still a new revision.",
          "UPDATE_LIST", 11, {"list": 7})
    valid("list-updated", "LIST (0x92) answering UPDATE_LIST.", "LIST", 8,
          {"id": 7, "name": "Weekly groceries", "icon": "Trips", "itemCount": 4,
           "uncheckedCount": 2, "revision": 6}, msg_type=0x92)
    valid("delete-list", "DELETE_LIST.", "DELETE_LIST", 12, {"list": 7})
    valid("list-deleted", "LIST_DELETED: the deletion committed as revision 7.", "LIST_DELETED", 12,
          {"list": 7, "revision": 7})
    # -- 6.7 ------------------------------------------------------------------
    valid("get-page-offset", "GET_PAGE of all rows from filtered offset 0, 50 rows.", "GET_PAGE", 13,
          {"list": 2, "filter": 0, "startKind": 0, "start": 0, "limit": 50})
    valid("get-page-anchor", "GET_PAGE of unchecked rows starting at anchor item 300, 1000 rows "
          "(2-byte varints).", "GET_PAGE", 14,
          {"list": 2, "filter": 2, "startKind": 1, "start": 300, "limit": 1000})
    valid("get-page-checked", "GET_PAGE of checked rows from filtered offset 20.", "GET_PAGE", 15,
          {"list": 2, "filter": 1, "startKind": 0, "start": 20, "limit": 20})
    valid("page", "PAGE of three rows: plain, checked with remind and due date, and with a "
          "negative price and a due date before 1970.", "PAGE", 13,
          {"list": 2, "revision": 140, "total": 12, "offset": 0, "rows": [
              item("Milk", id=3),
              item("Dentist appointment", checked=True, remind=True, due=MAY_1, id=17),
              item("Coupon: apples", due=MOON, price=-250, id=200),
          ]})
    valid("page-empty", "PAGE for an offset past `total`: no rows, not an error.", "PAGE", 15,
          {"list": 2, "revision": 140, "total": 7, "offset": 20, "rows": []})
    rows = [item("Row %03d - thirty bytes of text" % i, checked=(i % 3 == 0), id=i)
            for i in range(1, 101)]
    assert all(len(r["text"].encode()) == 30 for r in rows)
    page100 = valid("page-100-rows", "PAGE of 100 rows with 30-byte texts and ids 1-100, no due "
                    "dates or prices: the row overhead figure of SPEC.md section 6.", "PAGE", 16,
                    {"list": 2, "revision": 101, "total": 100, "offset": 0, "rows": rows})
    frame_bytes = len(page100["hex"]) // 2
    text_bytes = 30 * len(rows)
    page100["measurement"] = {
        "bodyBytes": frame_bytes - 10, "frameBytes": frame_bytes, "headerBytes": 10,
        "textBytes": text_bytes, "rows": len(rows),
        "overheadBytes": frame_bytes - text_bytes,
        "overheadPerRow": round((frame_bytes - text_bytes) / len(rows), 2),
    }
    # -- 6.8 ------------------------------------------------------------------
    patch_vectors = [
        ("patch-insert-at-index", "INSERT at index 0 (where 0), tempRef 1, no due, no price.",
         {"list": 2, "ops": [insert(1, 0, "Bread", index=0)]}),
        ("patch-insert-after-id", "INSERT after item 5 (where 1, ItemRef 0x0A) with a due date, no tempRef.",
         {"list": 2, "ops": [insert(0, 1, "Call mum", after=ID(5), remind=True, due=MAY_1)]}),
        ("patch-insert-after-temp", "INSERT at end declaring tempRef 1, then INSERT after "
         "temporary reference 1 (ItemRef 0x03) with a price.",
         {"list": 2, "ops": [insert(1, 2, "Pasta"), insert(2, 1, "Parmesan", after=TEMP(1), price=499)]}),
        ("patch-insert-at-end", "INSERT at end (where 2) with due and price, checked and remind.",
         {"list": 2, "ops": [insert(3, 2, "Birthday cake", checked=True, remind=True, due=MAY_1, price=2599)]}),
        ("patch-insert-negative-price", "INSERT with a negative price (a refund) and a due date before 1970.",
         {"list": 2, "ops": [insert(1, 0, "Bottle deposit", index=4, due=MOON, price=-150)]}),
        ("patch-set-text", "SET_TEXT of item 5, with multi-byte UTF-8.",
         {"list": 2, "ops": [{"op": "SET_TEXT", "ref": ID(5), "text": "Crème fraîche"}]}),
        ("patch-set-checked", "SET_CHECKED true on item 5 and false on item 300.",
         {"list": 2, "ops": [{"op": "SET_CHECKED", "ref": ID(5), "checked": True},
                             {"op": "SET_CHECKED", "ref": ID(300), "checked": False}]}),
        ("patch-toggle", "TOGGLE item 64 (ItemRef 0x80 0x01: two bytes).",
         {"list": 2, "ops": [{"op": "TOGGLE", "ref": ID(64)}]}),
        ("patch-set-due-present", "SET_DUE with a date.",
         {"list": 2, "ops": [{"op": "SET_DUE", "ref": ID(5), "present": True, "due": MAY_1}]}),
        ("patch-set-due-absent", "SET_DUE without a date: clears it.",
         {"list": 2, "ops": [{"op": "SET_DUE", "ref": ID(5), "present": False}]}),
        ("patch-set-remind", "SET_REMIND true, then false.",
         {"list": 2, "ops": [{"op": "SET_REMIND", "ref": ID(5), "remind": True},
                             {"op": "SET_REMIND", "ref": ID(6), "remind": False}]}),
        ("patch-set-price-present", "SET_PRICE with a price, and with a negative price.",
         {"list": 2, "ops": [{"op": "SET_PRICE", "ref": ID(5), "present": True, "price": 1999},
                             {"op": "SET_PRICE", "ref": ID(6), "present": True, "price": -1}]}),
        ("patch-set-price-absent", "SET_PRICE without a price: clears it.",
         {"list": 2, "ops": [{"op": "SET_PRICE", "ref": ID(5), "present": False}]}),
        ("patch-delete", "DELETE item 5.",
         {"list": 2, "ops": [{"op": "DELETE", "ref": ID(5)}]}),
        ("patch-move", "MOVE item 5 to row 0 and item 9 to row 130.",
         {"list": 2, "ops": [{"op": "MOVE", "ref": ID(5), "toIndex": 0},
                             {"op": "MOVE", "ref": ID(9), "toIndex": 130}]}),
        ("patch-base-revision", "PATCH with baseRevision 140 (presence 0x01): SET_CHECKED and DELETE.",
         {"list": 2, "baseRevision": 140, "ops": [
             {"op": "SET_CHECKED", "ref": ID(3), "checked": True},
             {"op": "DELETE", "ref": ID(17)}]}),
        ("patch-every-opcode", "One batch with every opcode, mixing item ids and a temporary reference.",
         {"list": 2, "baseRevision": 7, "ops": [
             insert(1, 2, "Tomatoes", price=349),
             {"op": "SET_TEXT", "ref": TEMP(1), "text": "Cherry tomatoes"},
             {"op": "SET_CHECKED", "ref": ID(3), "checked": True},
             {"op": "TOGGLE", "ref": TEMP(1)},
             {"op": "SET_DUE", "ref": TEMP(1), "present": True, "due": MAY_1},
             {"op": "SET_REMIND", "ref": TEMP(1), "remind": True},
             {"op": "SET_PRICE", "ref": ID(3), "present": False},
             {"op": "MOVE", "ref": TEMP(1), "toIndex": 0},
             {"op": "DELETE", "ref": ID(17)}]}),
    ]
    for i, (name, description, fields) in enumerate(patch_vectors):
        valid(name, description, "PATCH", 100 + i, fields)
    valid("patch-ok", "PATCH_OK: revision 141 and the ids of two temporary references.",
          "PATCH_OK", 102, {"list": 2, "revision": 141,
                            "pairs": [{"tempRef": 1, "id": 201}, {"tempRef": 2, "id": 202}]})
    valid("patch-ok-no-pairs", "PATCH_OK for a batch without temporary references.",
          "PATCH_OK", 105, {"list": 2, "revision": 142, "pairs": []})
    many_ops = [insert(i, 2, "Shopping item number %d" % i) for i in range(1, 51)]
    compressed("patch-compressed",
               "PATCH of 50 inserts sent COMPRESSED (only to a server that announced COMPRESSION). "
               "Check decode(hex) == fields and an encode/decode round trip, not re-encoded bytes.",
               "PATCH", 106, {"list": 2, "ops": many_ops})
    # -- 6.9 ------------------------------------------------------------------
    valid("error-with-field", "ERROR BAD_FIELD naming the field (presence 0x01).", "ERROR", 15,
          {"code": 4, "message": "filter must be 0, 1 or 2, got 3", "field": "filter"})
    valid("error-with-revision", "ERROR CONFLICT carrying the current revision (presence 0x02).",
          "ERROR", 107, {"code": 6, "message": "list 2 is at revision 141, not 140", "revision": 141})
    valid("error-plain", "ERROR NOT_FOUND with neither field nor revision (presence 0x00).",
          "ERROR", 12, {"code": 5, "message": "no list 7"})
    valid("error-unsupported-version", "ERROR UNSUPPORTED_VERSION answering a HELLO offering 2...3.",
          "ERROR", 1, {"code": 9, "message": "server speaks protocol versions 1...1"})
    valid("error-malformed-frame", "ERROR MALFORMED_FRAME with request id 0, sent before closing.",
          "ERROR", 0, {"code": 1, "message": "frame length 5 is smaller than the 6-byte header"})
    valid("error-field-and-revision", "ERROR with both optional fields (presence 0x03).", "ERROR", 108,
          {"code": 7, "message": "too many operations", "field": "ops", "revision": 3})
    # -- Section 3: what decoders accept ------------------------------------------
    hello = {"minVersion": 1, "maxVersion": 1, "features": 1, "clientName": "future-client/9.0"}
    accepted("hello-trailing-bytes", "HELLO followed by 5 body bytes a later version might append: "
             "a v1 receiver ignores them. Encoders write the body without them (`canonicalHex`).",
             "HELLO", 20, hello, enc_hello(hello) + bytes.fromhex("02ff0003aa"))
    gp = {"list": 1, "filter": 0, "startKind": 0, "start": 0, "limit": 3}
    accepted("get-page-long-varints", "GET_PAGE whose `list` is 1 written in 10 bytes and `limit` 3 "
             "in 2 bytes: decoders accept longer varint forms up to 10 bytes; encoders write the "
             "shortest (`canonicalHex`).", "GET_PAGE", 21, gp,
             bytes.fromhex("81808080808080808000") + b"\x00\x00\x00" + bytes.fromhex("8300"))

    # -- Malformed frames ----------------------------------------------------------
    def req(msg, body, request=30, flags=0):
        t = REQUEST_TYPES[msg] if isinstance(msg, str) else msg
        return frame(t, flags, request, body)

    malformed("malformed-length-too-small", "`length` 5 is less than 6: framing is lost; the "
              "answer uses request id 0 and the connection is closed.", "request",
              bytes.fromhex("00000005" "0200000000"), "MALFORMED_FRAME")
    malformed("malformed-length-zero", "`length` 0.", "request", bytes.fromhex("00000000"),
              "MALFORMED_FRAME")
    malformed("malformed-length-too-large", "`length` 4194305 is one more than the default "
              "maxFrameBytes: refused as soon as the 4-byte prefix is in, before the body "
              "arrives; the connection is closed.", "request",
              bytes.fromhex("00400001" "1100" "0000001f"), "FRAME_TOO_LARGE")
    malformed("malformed-unknown-type", "A request of type 0x7F, which v1 does not define: the "
              "frame is skipped and the connection stays usable.", "request",
              req(0x7F, b"\x01\x02\x03"), "UNKNOWN_MESSAGE")
    malformed("malformed-reserved-type", "AUTH (0x03) is reserved and not implemented.", "request",
              req(0x03, string("token")), "UNKNOWN_MESSAGE")
    malformed("malformed-response-type-as-request", "HELLO_OK (0x81) sent as a request.", "request",
              req(0x81, enc_hello_ok({"version": 1, "features": 0, "serverName": "x",
                                      "maxFrameBytes": 1, "maxPageRows": 1, "maxTextBytes": 1,
                                      "maxBatchOps": 1})), "UNKNOWN_MESSAGE")
    malformed("malformed-unknown-flags", "PING with frame flag bit 1 set.", "request",
              req("PING", byte_run("00"), flags=0x02), "BAD_FIELD", "flags", "PING")
    malformed("malformed-invalid-utf8", "CREATE_LIST whose name contains the byte 0xFF.", "request",
              req("CREATE_LIST", varint(4) + b"Gr\xffe" + string("No Icon")), "BAD_FIELD", "name",
              "CREATE_LIST")
    malformed("malformed-utf8-surrogate", "SET_TEXT whose text encodes a UTF-16 surrogate "
              "(ED A0 80), which is not valid UTF-8.", "request",
              req("PATCH", varint(2) + b"\x00" + varint(1) + u8(2) + enc_item_ref(ID(5)) +
                  varint(3) + b"\xed\xa0\x80"), "BAD_FIELD", "text", "PATCH")
    malformed("malformed-truncated-string", "CREATE_LIST whose name says 9 bytes but 4 follow.",
              "request", req("CREATE_LIST", varint(9) + b"Groc"), "BAD_FIELD", "name", "CREATE_LIST")
    malformed("malformed-truncated-body", "CREATE_LIST whose body ends before `icon`.", "request",
              req("CREATE_LIST", string("Groceries")), "BAD_FIELD", "icon", "CREATE_LIST")
    malformed("malformed-truncated-varint", "GET_PAGE whose body ends inside the `limit` varint.",
              "request", req("GET_PAGE", b"\x02\x00\x00\x00" + b"\xe8"), "BAD_FIELD", "limit",
              "GET_PAGE")
    malformed("malformed-varint-11-bytes", "DELETE_LIST whose `list` varint has 11 bytes (the 10th "
              "has the continuation bit).", "request",
              req("DELETE_LIST", b"\x80" * 10 + b"\x01"), "BAD_FIELD", "list", "DELETE_LIST")
    malformed("malformed-varint-overflow", "DELETE_LIST whose 10-byte `list` varint has 0x02 as its "
              "10th byte: the value does not fit in 64 bits.", "request",
              req("DELETE_LIST", b"\xff" * 9 + b"\x02"), "BAD_FIELD", "list", "DELETE_LIST")
    malformed("malformed-bad-bool", "SET_CHECKED with `checked` 0x02.", "request",
              req("PATCH", varint(2) + b"\x00" + varint(1) + u8(3) + enc_item_ref(ID(5)) + b"\x02"),
              "BAD_FIELD", "checked", "PATCH")
    malformed("malformed-bad-bool-present", "SET_DUE with `present` 0xFF.", "request",
              req("PATCH", varint(2) + b"\x00" + varint(1) + u8(5) + enc_item_ref(ID(5)) + b"\xff"),
              "BAD_FIELD", "present", "PATCH")
    malformed("malformed-unknown-presence", "UPDATE_LIST with presence bit 2, which v1 does not "
              "define.", "request", req("UPDATE_LIST", varint(7) + b"\x04" + string("x")),
              "BAD_FIELD", "presence", "UPDATE_LIST")
    malformed("malformed-patch-unknown-presence", "PATCH with presence 0x03 (only bit 0 is defined).",
              "request", req("PATCH", varint(2) + b"\x03" + varint(1) + varint(1) +
                             enc_op({"op": "TOGGLE", "ref": ID(5)})),
              "BAD_FIELD", "presence", "PATCH")
    malformed("malformed-unknown-opcode", "PATCH operation with opcode 0x0A.", "request",
              req("PATCH", varint(2) + b"\x00" + varint(1) + b"\x0a" + enc_item_ref(ID(5))),
              "BAD_FIELD", "opcode", "PATCH")
    malformed("malformed-opcode-zero", "PATCH operation with opcode 0x00.", "request",
              req("PATCH", varint(2) + b"\x00" + varint(1) + b"\x00" + enc_item_ref(ID(5))),
              "BAD_FIELD", "opcode", "PATCH")
    malformed("malformed-patch-count", "PATCH announcing 100 operations in a body that holds one: a "
              "count the rest of the body cannot hold (each operation takes at least 2 bytes) is "
              "BAD_FIELD naming it before any operation is read.", "request",
              req("PATCH", varint(2) + b"\x00" + varint(100) + enc_op({"op": "TOGGLE", "ref": ID(5)})),
              "BAD_FIELD", "ops", "PATCH")
    malformed("malformed-insert-where", "INSERT with `where` 3.", "request",
              req("PATCH", varint(2) + b"\x00" + varint(1) + u8(1) + varint(0) + b"\x03" +
                  enc_item_fields(item("x"))), "BAD_FIELD", "where", "PATCH")
    malformed("malformed-item-flags", "INSERT whose ItemFields flags set bit 4.", "request",
              req("PATCH", varint(2) + b"\x00" + varint(1) + u8(1) + varint(0) + b"\x02" +
                  b"\x10" + string("x")), "BAD_FIELD", "flags", "PATCH")
    malformed("malformed-filter-out-of-range", "GET_PAGE with `filter` 3.", "request",
              req("GET_PAGE", b"\x02\x03\x00\x00\x32"), "BAD_FIELD", "filter", "GET_PAGE")
    malformed("malformed-start-kind", "GET_PAGE with `startKind` 2; the body ends right after it, "
              "so the first wrong field is `startKind`.", "request",
              req("GET_PAGE", b"\x02\x00\x02"), "BAD_FIELD", "startKind", "GET_PAGE")
    malformed("malformed-ping-too-long", "PING with 1025 bytes of data (at most 1024).", "request",
              req("PING", byte_run("ab" * 1025)), "LIMIT_EXCEEDED", "data", "PING")
    malformed("malformed-not-zlib", "COMPRESSED CREATE_LIST whose body is not a zlib stream.",
              "request", req("CREATE_LIST", b"this is not zlib", flags=COMPRESSED),
              "BAD_FIELD", "body", "CREATE_LIST")
    packed = deflate_fixed(string("Groceries") + string("No Icon"))
    malformed("malformed-zlib-truncated", "COMPRESSED CREATE_LIST whose zlib stream lacks its last "
              "2 bytes (part of the Adler-32).", "request",
              req("CREATE_LIST", packed[:-2], flags=COMPRESSED), "BAD_FIELD", "body", "CREATE_LIST")
    malformed("malformed-zlib-trailing-bytes", "COMPRESSED CREATE_LIST with a byte after the end of "
              "the zlib stream.", "request", req("CREATE_LIST", packed + b"\x00", flags=COMPRESSED),
              "BAD_FIELD", "body", "CREATE_LIST")
    bomb = deflate_fixed(varint(256 * 1024) + bytes(256 * 1024))
    malformed("malformed-zlib-bomb", "With maxFrameBytes 65536, a COMPRESSED PING of %d body bytes "
              "whose zlib stream inflates to 262,147 bytes, past 65536 - 6: FRAME_TOO_LARGE, and "
              "the connection stays open (the frame's own length was fine)." % len(bomb), "request",
              req("PING", bomb, flags=COMPRESSED), "FRAME_TOO_LARGE", None, "PING",
              max_frame_bytes=65536)
    malformed("malformed-error-presence", "ERROR with presence bit 2, which v1 does not define.",
              "response", frame(0xFF, 0, 9, varint(4) + b"\x04" + string("x") + string("y")),
              "BAD_FIELD", "presence", "ERROR")
    malformed("malformed-page-truncated-row", "PAGE announcing 2 rows whose second row ends inside "
              "its text.", "response",
              frame(0xA0, 0, 9, varint(2) + varint(5) + varint(2) + varint(0) + varint(2) +
                    varint(1) + enc_item_fields(item("Milk")) + varint(2) + b"\x00" + varint(5) + b"Eg"),
              "BAD_FIELD", "text", "PAGE")


# ---------------------------------------------------------------------------
# Checking and writing
# ---------------------------------------------------------------------------

def check(v):
    """Decodes every vector with the reference decoder and checks the result."""
    data = bytes.fromhex(v["hex"])
    limit = v.get("maxFrameBytes", DEFAULT_MAX_FRAME_BYTES)
    # Every strict prefix needs more bytes, unless the length is already wrong.
    for cut in range(len(data)):
        try:
            assert parse_frame(data[:cut], limit) is None, (v["name"], cut)
        except WireError as e:
            assert "error" in v and e.closes and cut >= 4, (v["name"], cut)
    try:
        parsed = parse_frame(data, limit)
        assert parsed is not None and parsed[4] == len(data), v["name"]
        t, flags, request, body, _ = parsed
        assert v["frame"] == {"type": t, "flags": flags, "request": request}, v["name"]
        message, fields = decode_frame(v["direction"], t, flags, body, limit)
    except WireError as e:
        err = v.get("error")
        assert err is not None, (v["name"], e)
        assert (e.code, e.field, e.closes) == (err["code"], err.get("field"), err["closesConnection"]), \
            (v["name"], e.code, e.field, e.closes)
        return
    assert "error" not in v, v["name"] + " decoded but should not"
    assert message == v["message"], v["name"]
    assert fields == v["fields"], (v["name"], fields, v["fields"])


def render(v):
    return json.dumps(v, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv):
    build()
    names = [v["name"] for v in VECTORS]
    assert len(names) == len(set(names)), "duplicate vector names"
    for v in VECTORS:
        check(v)
    wanted = {v["name"] + ".json": render(v) for v in VECTORS}
    existing = {f for f in os.listdir(HERE) if f.endswith(".json")}
    stale = sorted(f for f in existing if f not in wanted)
    changed = sorted(f for f, text in wanted.items()
                     if not os.path.exists(os.path.join(HERE, f)) or
                     open(os.path.join(HERE, f), encoding="utf-8").read() != text)
    if "--check" in argv:
        for f in stale:
            print("stale vector file (not generated):", f)
        for f in changed:
            print("out of date:", f)
        return 1 if stale or changed else 0
    for f in stale:
        os.remove(os.path.join(HERE, f))
    for f in changed:
        with open(os.path.join(HERE, f), "w", encoding="utf-8", newline="\n") as out:
            out.write(wanted[f])
    print("%d vectors (%d valid, %d malformed); %d written, %d removed" % (
        len(VECTORS), sum("error" not in v for v in VECTORS), sum("error" in v for v in VECTORS),
        len(changed), len(stale)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
