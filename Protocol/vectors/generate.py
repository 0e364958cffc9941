#!/usr/bin/env python3
"""Golden vectors for the Checklists wire protocol, version 1.

An independent second implementation of the protocol, written from
Protocol/SPEC.md alone (it shares no code and no structure with the Swift
codec): a reference encoder that turns the meaning of each message (the
"fields" object of a vector) into frame bytes, and a reference decoder that
turns the bytes back into the meaning or into the error the spec prescribes.
Every vector is checked with both before it is written.

It also writes snapshot/idempotency.json and snapshot/idempotency.ckss.gz: a
server's snapshot with IDEMPOTENCY records, made from Protocol/SNAPSHOT.md
alone and read back by its own snapshot reader (SNAPSHOT.md section 10).

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
    16: "DUPLICATE_KEY",
    17: "UNAVAILABLE",
    18: "RATE_LIMITED",
    19: "QUOTA_EXCEEDED",
}
ERROR_NUMBERS = {name: code for code, name in ERROR_CODES.items()}
OPCODES = {
    "INSERT": 0x01, "SET_TEXT": 0x02, "SET_CHECKED": 0x03, "TOGGLE": 0x04,
    "SET_DUE": 0x05, "SET_REMIND": 0x06, "SET_PRICE": 0x07, "DELETE": 0x08,
    "MOVE": 0x09, "SET_KEY": 0x0A,
}
OPNAMES = {code: name for name, code in OPCODES.items()}
COMPRESSED = 0x01
PING_MAX_DATA = 1024
TOKEN_MAX_BYTES = 8192
CLIENT_KEY_MAX_BYTES = 64       # section 4: a client key is 1 to 64 bytes of UTF-8
FEATURE_COMPRESSION = 1         # HELLO / HELLO_OK `features` bits (section 6.1)
FEATURE_CLIENT_KEYS = 2

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
             (4 if "due" in f else 0) | (8 if "price" in f else 0) |
             (16 if "clientKey" in f else 0))
    out = u8(flags) + string(f["text"])
    if "due" in f:
        out += zigzag(f["due"])
    if "price" in f:
        out += zigzag(f["price"])
    if "clientKey" in f:        # flag bit 4: the client key follows the price
        out += string(f["clientKey"])
    return out


def enc_op_fields(name, op):
    """The fields after the item of every operation but INSERT (section 6.8),
    the same in a PATCH and in an **AppliedOp**."""
    if name == "SET_TEXT":
        return string(op["text"])
    if name == "SET_CHECKED":
        return boolean(op["checked"])
    if name == "SET_DUE":
        return boolean(op["present"]) + (zigzag(op["due"]) if op["present"] else b"")
    if name == "SET_REMIND":
        return boolean(op["remind"])
    if name == "SET_PRICE":
        return boolean(op["present"]) + (zigzag(op["price"]) if op["present"] else b"")
    if name == "MOVE":
        return varint(op["toIndex"])
    if name == "SET_KEY":
        return boolean(op["present"]) + (string(op["clientKey"]) if op["present"] else b"")
    return b""


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
    out += enc_item_ref(op["ref"]) + enc_op_fields(name, op)
    return out


# Messages (section 6) --------------------------------------------------------

def enc_hello(f):
    out = varint(f["minVersion"]) + varint(f["maxVersion"]) + varint(f["features"]) + string(f["clientName"])
    if "token" in f:            # presence 0x01, then the token; without one the body ends here
        out += u8(1) + string(f["token"])
    return out


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
    out = varint(f["list"]) + u8((1 if "baseRevision" in f else 0) | (2 if "client" in f else 0))
    if "baseRevision" in f:
        out += varint(f["baseRevision"])
    if "client" in f:           # presence bit 1: the idempotency key (section 8)
        out += varint(f["client"]) + varint(f["sequence"])
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
    presence = (1 if "field" in f else 0) | (2 if "revision" in f else 0) | (4 if "retryAfterMs" in f else 0)
    out = varint(f["code"]) + u8(presence) + string(f["message"])
    if "field" in f:
        out += string(f["field"])
    if "revision" in f:
        out += varint(f["revision"])
    if "retryAfterMs" in f:
        out += varint(f["retryAfterMs"])
    return out


ENCODERS = {
    "HELLO": enc_hello,
    "PING": lambda f: byte_run(f["data"]),
    "LIST_LISTS": lambda f: b"",
    "CREATE_LIST": lambda f: string(f["name"]) + string(f["icon"]),
    "UPDATE_LIST": enc_update_list,
    "DELETE_LIST": lambda f: varint(f["list"]),
    # startKind 2: `start` is the client key, a string (section 6.7)
    "GET_PAGE": lambda f: (varint(f["list"]) + u8(f["filter"]) + u8(f["startKind"]) +
                           (string(f["start"]) if f["startKind"] == 2 else varint(f["start"])) +
                           varint(f["limit"])),
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

    def presence(self, known, field="presence"):
        p = self.u8(field)
        if p & ~known:
            raise bad(field)
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
    if flags & 0xE0:
        raise bad("flags")
    into["checked"] = bool(flags & 1)
    into["remind"] = bool(flags & 2)
    into["text"] = r.string("text")
    if flags & 4:
        into["due"] = r.zigzag("due")
    if flags & 8:
        into["price"] = r.zigzag("price")
    if flags & 16:
        into["clientKey"] = r.string("clientKey")
    return into


def dec_op_fields(r, name, op):
    """Reads what `enc_op_fields` writes into `op`."""
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
    elif name == "SET_KEY":
        op["present"] = r.boolean("present")
        if op["present"]:
            op["clientKey"] = r.string("clientKey")
    return op


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
    return dec_op_fields(r, op["op"], op)


def dec_hello(r):
    f = {"minVersion": r.varint("minVersion"), "maxVersion": r.varint("maxVersion"),
         "features": r.varint("features"), "clientName": r.string("clientName")}
    if r.remaining() == 0:      # the presence byte is optional
        return f
    if r.presence(0b1) & 1:
        f["token"] = r.string("token")
        if len(f["token"].encode("utf-8")) > TOKEN_MAX_BYTES:
            raise WireError(ERROR_NUMBERS["LIMIT_EXCEEDED"], "token")
    return f


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
    if f["startKind"] > 2:
        raise bad("startKind")
    f["start"] = r.string("start") if f["startKind"] == 2 else r.varint("start")
    f["limit"] = r.varint("limit")
    return f


def dec_patch(r):
    f = {"list": r.varint("list")}
    p = r.presence(0b11)
    if p & 1:
        f["baseRevision"] = r.varint("baseRevision")
    if p & 2:
        f["client"] = r.varint("client")
        f["sequence"] = r.varint("sequence")
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
    p = r.presence(0b111)
    f["message"] = r.string("message")
    if p & 1:
        f["field"] = r.string("field")
    if p & 2:
        f["revision"] = r.varint("revision")
    if p & 4:
        f["retryAfterMs"] = r.varint("retryAfterMs")
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
    # HELLO and HELLO_OK travel before either peer has announced COMPRESSION.
    if flags & COMPRESSED and msg_type == (0x01 if direction == "request" else 0x81):
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
    valid("hello-token", "HELLO carrying an access token: presence 0x01 after clientName, then "
          "the token string.", "HELLO", 1, {"minVersion": 1, "maxVersion": 1, "features": 1,
                                            "clientName": "checklist-cli/1.0",
                                            "token": "s3cr3t-t0ken-for-alice"})
    valid("hello-ok", "HELLO_OK choosing version 1 and announcing the default limits.",
          "HELLO_OK", 1, {"version": 1, "features": 1, "serverName": "checklistd/1.0",
                          "maxFrameBytes": 4194304, "maxPageRows": 1000,
                          "maxTextBytes": 4096, "maxBatchOps": 1000})
    valid("hello-client-keys", "HELLO announcing COMPRESSION and CLIENT_KEYS (features 0x03): "
          "the client reads client keys in PAGE rows.", "HELLO", 1,
          {"minVersion": 1, "maxVersion": 1, "features": FEATURE_COMPRESSION | FEATURE_CLIENT_KEYS,
           "clientName": "checklist-cli/1.0"})
    valid("hello-ok-client-keys", "HELLO_OK of a server that stores client keys (features 0x03: "
          "COMPRESSION and CLIENT_KEYS), as checklistd answers.", "HELLO_OK", 1,
          {"version": 1, "features": FEATURE_COMPRESSION | FEATURE_CLIENT_KEYS,
           "serverName": "checklistd/1.0", "maxFrameBytes": 4194304, "maxPageRows": 1000,
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
    valid("get-page-key", "GET_PAGE of all rows starting at the item whose client key is a "
          "Shopping List uuid (startKind 2: `start` is a string).", "GET_PAGE", 16,
          {"list": 2, "filter": 0, "startKind": 2, "start": "0C5A3E1B-9F2D-4E7A-8B61-3D2F5A7C9E10",
           "limit": 50})
    valid("get-page-limit-zero", "GET_PAGE with limit 0. It decodes: the server refuses it when it "
          "carries it out (BAD_FIELD limit; HELLO_REQUIRED before the handshake), like CHANGES_SINCE "
          "limit 0 and a PATCH of 0 operations (SPEC.md section 2).", "GET_PAGE", 17,
          {"list": 2, "filter": 0, "startKind": 0, "start": 0, "limit": 0})
    valid("page-client-keys", "PAGE to a client that announced CLIENT_KEYS: a row with a client key "
          "(flag bit 4, the key after the price) and one without.", "PAGE", 16,
          {"list": 2, "revision": 9, "total": 2, "offset": 0, "rows": [
              item("Milk", price=299, clientKey="0C5A3E1B-9F2D-4E7A-8B61-3D2F5A7C9E10", id=4),
              item("Eggs", id=5),
          ]})
    valid("page", "PAGE of three rows: plain, checked with remind and due date, and with a "
          "negative price and a due date before 1970.", "PAGE", 13,
          {"list": 2, "revision": 140, "total": 12, "offset": 0, "rows": [
              item("Milk", id=3),
              item("Dentist appointment", checked=True, remind=True, due=MAY_1, id=17),
              item("Coupon: apples", due=MOON, price=-250, id=200),
          ]})
    valid("page-empty", "PAGE for an offset past `total`: no rows, not an error.", "PAGE", 15,
          {"list": 2, "revision": 140, "total": 7, "offset": 20, "rows": []})
    valid("page-anchor-past-matches", "PAGE answering get-page-anchor when neither item 300 nor "
          "any row after it is unchecked: no rows, `offset` = `total` (the unchecked rows all come "
          "before the anchor), not an error.", "PAGE", 14,
          {"list": 2, "revision": 140, "total": 5, "offset": 5, "rows": []})
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
        ("patch-no-ops", "PATCH of 0 operations. It decodes: the server refuses it when it carries it "
         "out (BAD_FIELD ops; HELLO_REQUIRED before the handshake), like GET_PAGE limit 0 and "
         "CHANGES_SINCE limit 0 (SPEC.md section 2).", {"list": 2, "ops": []}),
    ]
    for i, (name, description, fields) in enumerate(patch_vectors):
        valid(name, description, "PATCH", 100 + i, fields)
    valid("patch-ok", "PATCH_OK: revision 141 and the ids of two temporary references.",
          "PATCH_OK", 102, {"list": 2, "revision": 141,
                            "pairs": [{"tempRef": 1, "id": 201}, {"tempRef": 2, "id": 202}]})
    valid("patch-ok-no-pairs", "PATCH_OK for a batch without temporary references.",
          "PATCH_OK", 105, {"list": 2, "revision": 142, "pairs": []})
    # Item ids (SPEC.md section 6.8): a list's INSERTs take consecutive ids in operation order,
    # with or without a temporary reference, from the list's next item id.
    valid("patch-three-inserts", "PATCH of three INSERTs at the end of a list whose next item id "
          "is 4; only the first and the third declare a temporary reference.", "PATCH", 107,
          {"list": 2, "ops": [insert(1, 2, "Apples"), insert(0, 2, "Pears"), insert(2, 2, "Plums")]})
    valid("patch-ok-three-inserts", "PATCH_OK of patch-three-inserts: Apples got id 4, Pears "
          "(no temporary reference, so no pair) 5, Plums 6.", "PATCH_OK", 107,
          {"list": 2, "revision": 4, "pairs": [{"tempRef": 1, "id": 4}, {"tempRef": 2, "id": 6}]})
    # Client keys (section 6.8): an INSERT carrying one, SET_KEY setting and clearing one.
    valid("patch-client-keys", "PATCH inserting an item with a client key (ItemFields flag bit 4), "
          "then SET_KEY giving item 5 a key and SET_KEY clearing item 6's (present false).",
          "PATCH", 109,
          {"list": 2, "ops": [insert(1, 2, "Milk", price=299, clientKey="0C5A3E1B-9F2D-4E7A-8B61-3D2F5A7C9E10"),
                              {"op": "SET_KEY", "ref": ID(5), "present": True, "clientKey": "offline-7"},
                              {"op": "SET_KEY", "ref": ID(6), "present": False}]})
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
    valid("error-rate-limited", "ERROR RATE_LIMITED: the namespace is over the server's request rate; "
          "retry after 250 ms (presence 0x04).", "ERROR", 111,
          {"code": ERROR_NUMBERS["RATE_LIMITED"], "message": "over 20 requests a second; retry in 250 ms",
           "retryAfterMs": 250})
    valid("error-quota-exceeded", "ERROR QUOTA_EXCEEDED naming the quota the change would pass "
          "(presence 0x01, field items); nothing of the change was applied.", "ERROR", 112,
          {"code": ERROR_NUMBERS["QUOTA_EXCEEDED"],
           "message": "the namespace holds 1000 items; 2 more would pass its quota of 1000", "field": "items"})
    valid("error-quota-exceeded-bytes", "ERROR QUOTA_EXCEEDED answering a PATCH, CREATE_LIST or IMPORT that "
          "would take the namespace's texts and keys past --quota-bytes (presence 0x01, field bytes); "
          "nothing of it was applied.", "ERROR", 113,
          {"code": ERROR_NUMBERS["QUOTA_EXCEEDED"],
           "message": "the namespace holds 65530 bytes of texts and keys; 12 more would pass its quota of 65536",
           "field": "bytes"})
    valid("error-plain", "ERROR NOT_FOUND with neither field nor revision (presence 0x00).",
          "ERROR", 12, {"code": 5, "message": "no list 7"})
    valid("error-duplicate-key", "ERROR DUPLICATE_KEY answering an INSERT (or SET_KEY) whose client "
          "key another item of the list has; nothing of the batch is applied.", "ERROR", 109,
          {"code": ERROR_NUMBERS["DUPLICATE_KEY"], "message": "client key \"k1\" is already item 4's in list 2",
           "field": "clientKey"})
    valid("error-key-too-long", "ERROR LIMIT_EXCEEDED for a client key of 65 bytes (the limit is %d)."
          % CLIENT_KEY_MAX_BYTES, "ERROR", 110,
          {"code": ERROR_NUMBERS["LIMIT_EXCEEDED"], "message": "client key is 65 bytes, the limit is 64",
           "field": "clientKey"})
    valid("error-unsupported-version", "ERROR UNSUPPORTED_VERSION answering a HELLO offering 2...3.",
          "ERROR", 1, {"code": 9, "message": "server speaks protocol versions 1...1"})
    valid("error-not-authenticated", "ERROR NOT_AUTHENTICATED answering a HELLO whose token the "
          "server does not know (presence 0x00).", "ERROR", 1,
          {"code": 8, "message": "unknown token (attempt 1 of 3)"})
    valid("error-malformed-frame", "ERROR MALFORMED_FRAME with request id 0, sent before closing.",
          "ERROR", 0, {"code": 1, "message": "frame length 5 is smaller than the 6-byte header"})
    valid("error-field-and-revision", "ERROR with both optional fields (presence 0x03).", "ERROR", 108,
          {"code": 7, "message": "too many operations", "field": "ops", "revision": 3})
    # -- Section 3: what decoders accept ------------------------------------------
    hello = {"minVersion": 1, "maxVersion": 1, "features": 1, "clientName": "future-client/9.0"}
    accepted("hello-trailing-bytes", "HELLO with presence 0x00 (no token) followed by 5 body bytes "
             "a later version might append: a v1 receiver ignores them. Encoders write the body "
             "without them and without the presence byte (`canonicalHex`).",
             "HELLO", 20, hello, enc_hello(hello) + b"\x00" + bytes.fromhex("02ff0003aa"))
    accepted("hello-presence-zero", "HELLO whose optional presence byte is 0x00: no token, the same "
             "meaning as a body that ends after clientName, which is what encoders write "
             "(`canonicalHex`).", "HELLO", 22, hello, enc_hello(hello) + b"\x00")
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
    hello_head = varint(1) + varint(1) + varint(0) + string("x")
    malformed("malformed-hello-presence", "HELLO whose presence byte sets bit 1, which v1 does not "
              "define.", "request", req("HELLO", hello_head + b"\x02" + string("t")),
              "BAD_FIELD", "presence", "HELLO")
    malformed("malformed-hello-token-too-long", "HELLO with a token of 8193 bytes (at most 8192). "
              "A server with access control answers it NOT_AUTHENTICATED instead (SPEC.md section 2.1).",
              "request", req("HELLO", hello_head + b"\x01" + string("t" * 8193)),
              "LIMIT_EXCEEDED", "token", "HELLO")
    malformed("malformed-hello-token-too-long-utf8", "HELLO with a token of 8193 bytes that also "
              "holds the byte 0xFF: a string is decoded (its UTF-8 checked) before its length limit "
              "is, so the error is BAD_FIELD, not LIMIT_EXCEEDED.", "request",
              req("HELLO", hello_head + b"\x01" + varint(8193) + b"t" * 1000 + b"\xff" + b"t" * 7192),
              "BAD_FIELD", "token", "HELLO")
    hello_body = enc_hello({"minVersion": 1, "maxVersion": 1, "features": 1, "clientName": "x" * 1100})
    malformed("malformed-hello-compressed", "HELLO with the COMPRESSED flag and a valid zlib body: "
              "HELLO is never compressed (no peer has announced COMPRESSION yet), whatever its size.",
              "request", req("HELLO", deflate_fixed(hello_body), flags=COMPRESSED), "BAD_FIELD", "flags",
              "HELLO")
    hello_ok_body = enc_hello_ok({"version": 1, "features": 1, "serverName": "s" * 1100,
                                  "maxFrameBytes": 4194304, "maxPageRows": 1000, "maxTextBytes": 4096,
                                  "maxBatchOps": 1000})
    malformed("malformed-hello-ok-compressed", "HELLO_OK with the COMPRESSED flag and a valid zlib "
              "body: HELLO_OK is never compressed either.", "response",
              frame(0x81, COMPRESSED, 1, deflate_fixed(hello_ok_body)), "BAD_FIELD", "flags", "HELLO_OK")
    malformed("malformed-hello-token-utf8", "HELLO whose token contains the byte 0xFF.", "request",
              req("HELLO", hello_head + b"\x01" + varint(3) + b"a\xffb"), "BAD_FIELD", "token", "HELLO")
    malformed("malformed-hello-token-truncated", "HELLO whose presence announces a token but the "
              "body ends.", "request", req("HELLO", hello_head + b"\x01"), "BAD_FIELD", "token", "HELLO")
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
    malformed("malformed-patch-unknown-presence", "PATCH with presence 0x05 (only bits 0 and 1 are "
              "defined).", "request", req("PATCH", varint(2) + b"\x05" + varint(1) + varint(1) +
                             enc_op({"op": "TOGGLE", "ref": ID(5)})),
              "BAD_FIELD", "presence", "PATCH")
    malformed("malformed-unknown-opcode", "PATCH operation with opcode 0x0B.", "request",
              req("PATCH", varint(2) + b"\x00" + varint(1) + b"\x0b" + enc_item_ref(ID(5))),
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
    malformed("malformed-item-flags", "INSERT whose ItemFields flags set bit 5.", "request",
              req("PATCH", varint(2) + b"\x00" + varint(1) + u8(1) + varint(0) + b"\x02" +
                  b"\x20" + string("x")), "BAD_FIELD", "flags", "PATCH")
    malformed("malformed-item-key-missing", "INSERT whose ItemFields flags set bit 4 (a client "
              "key follows) but the body ends after the text.", "request",
              req("PATCH", varint(2) + b"\x00" + varint(1) + u8(1) + varint(0) + b"\x02" +
                  b"\x10" + string("x")), "BAD_FIELD", "clientKey", "PATCH")
    malformed("malformed-filter-out-of-range", "GET_PAGE with `filter` 3.", "request",
              req("GET_PAGE", b"\x02\x03\x00\x00\x32"), "BAD_FIELD", "filter", "GET_PAGE")
    malformed("malformed-start-kind", "GET_PAGE with `startKind` 3; the body ends right after it, "
              "so the first wrong field is `startKind`.", "request",
              req("GET_PAGE", b"\x02\x00\x03"), "BAD_FIELD", "startKind", "GET_PAGE")
    malformed("malformed-ping-too-long", "PING with 1025 bytes of data (at most 1024).", "request",
              req("PING", byte_run("ab" * 1025)), "LIMIT_EXCEEDED", "data", "PING")
    malformed("malformed-ping-too-long-truncated", "PING whose data announces 1025 bytes and 3 follow: "
              "like a string, the bytes are read whole before their limit is applied, so a count "
              "that runs past the body is BAD_FIELD, not LIMIT_EXCEEDED (SPEC.md section 3).", "request",
              req("PING", varint(1025) + b"abc"), "BAD_FIELD", "data", "PING")
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
    malformed("malformed-error-presence", "ERROR with presence bit 3, which v1 does not define.",
              "response", frame(0xFF, 0, 9, varint(4) + b"\x08" + string("x") + string("y")),
              "BAD_FIELD", "presence", "ERROR")
    malformed("malformed-page-truncated-row", "PAGE announcing 2 rows whose second row ends inside "
              "its text.", "response",
              frame(0xA0, 0, 9, varint(2) + varint(5) + varint(2) + varint(0) + varint(2) +
                    varint(1) + enc_item_fields(item("Milk")) + varint(2) + b"\x00" + varint(5) + b"Eg"),
              "BAD_FIELD", "text", "PAGE")


# ---------------------------------------------------------------------------
# Section 6.10: STATS (0x50) and STATS_REPORT (0xD0)
# ---------------------------------------------------------------------------

REQUEST_TYPES["STATS"] = 0x50
RESPONSE_TYPES[0xD0] = "STATS_REPORT"

# The varint fields of STATS_REPORT before `typeCount`, then those between the
# `codeCount` pairs and `presence`, in the order of the SPEC.md table.
STATS_HEAD = ["uptimeSeconds", "connectionsOpen", "connectionsTotal", "connectionsRejected",
              "connectionsIdleClosed", "connectionsDroppedForOutput", "readPauses",
              "inFlightPauses", "bytesIn", "bytesOut"]
STATS_MIDDLE = ["latencyCount", "latencyP50Micros", "latencyP90Micros", "latencyP99Micros",
                "latencyP999Micros", "latencyMaxMicros", "lists", "items"]
# The live-sync fields after presence bit 2.
STATS_SYNC = ["syncSubscribers", "syncChangesPublished", "syncPushesDelivered", "syncSubscribersDropped",
              "syncRetainedChanges", "syncRetainedBytes"]
# The TLS fields after presence bit 3.
STATS_TLS = ["tlsHandshakes", "tlsNotTLS", "tlsHandshakeFailures", "tlsHandshakesTruncated",
             "tlsHandshakeTimeouts", "tlsRecordErrors", "tlsOnPlainPort"]
# The web port's fields after presence bit 4 (Protocol/WEBSOCKET.md).
STATS_WEB = ["webUpgrades", "webHandshakesRefused", "webOriginsRefused", "webClosedProtocolError",
             "webClosedUnsupportedData", "webClosedInvalidPayload", "webClosedMessageTooBig", "webPingTimeouts"]


# The namespace usage fields after presence bit 5, then the quotas, each after
# its own bit of `quotaPresence`.
STATS_USAGE = ["usageLists", "usageItems", "usageBytes"]
STATS_QUOTAS = ["quotaLists", "quotaItems", "quotaBytes"]
STATS_USAGE_OPTION = 1          # STATS `options` bit 0


def enc_stats(f):
    """An empty body when `options` is absent or 0 (as before options existed)."""
    options = f.get("options", 0)
    return u8(options) if options else b""


def dec_stats(r):
    if r.remaining() == 0:
        return {}
    options = r.u8("options")
    return {"options": options} if options else {}


def enc_stats_report(f):
    out = b"".join(varint(f[k]) for k in STATS_HEAD)
    out += varint(len(f["requests"]))
    for t in f["requests"]:
        out += u8(t["type"]) + varint(t["requests"]) + varint(t["errors"])
    out += varint(len(f["errors"]))
    for e in f["errors"]:
        out += varint(e["code"]) + varint(e["count"])
    out += b"".join(varint(f[k]) for k in STATS_MIDDLE)
    has_log, has_snapshot, has_sync = "logLastLSN" in f, "snapshotLSN" in f, "syncSubscribers" in f
    has_tls, has_web, has_usage = "tlsHandshakes" in f, "webUpgrades" in f, "usageLists" in f
    out += u8((1 if has_log else 0) | (2 if has_snapshot else 0) | (4 if has_sync else 0) | (8 if has_tls else 0)
              | (16 if has_web else 0) | (32 if has_usage else 0))
    if has_log:
        out += (varint(f["logLastLSN"]) + varint(f["logDurableLSN"]) + varint(f["logSegments"]) +
                boolean(f["logFailed"]))
    if has_snapshot:
        out += varint(f["snapshotLSN"]) + zigzag(f["snapshotTime"]) + varint(f["snapshotBytes"])
    if has_sync:
        out += b"".join(varint(f[k]) for k in STATS_SYNC)
    if has_tls:
        out += b"".join(varint(f[k]) for k in STATS_TLS)
    if has_web:
        out += b"".join(varint(f[k]) for k in STATS_WEB)
    if has_usage:
        out += b"".join(varint(f[k]) for k in STATS_USAGE)
        quotas = [k for k in STATS_QUOTAS if k in f]
        out += u8(sum(1 << i for i, k in enumerate(STATS_QUOTAS) if k in f))
        out += b"".join(varint(f[k]) for k in quotas)
    return out


def dec_stats_report(r):
    f = {k: r.varint(k) for k in STATS_HEAD}
    n = r.count("typeCount", 3)
    f["requests"] = [{"type": r.u8("type"), "requests": r.varint("requests"),
                      "errors": r.varint("errors")} for _ in range(n)]
    n = r.count("codeCount", 2)
    f["errors"] = [{"code": r.varint("code"), "count": r.varint("count")} for _ in range(n)]
    for k in STATS_MIDDLE:
        f[k] = r.varint(k)
    p = r.presence(0b111111)
    if p & 1:
        for k in ["logLastLSN", "logDurableLSN", "logSegments"]:
            f[k] = r.varint(k)
        f["logFailed"] = r.boolean("logFailed")
    if p & 2:
        f["snapshotLSN"] = r.varint("snapshotLSN")
        f["snapshotTime"] = r.zigzag("snapshotTime")
        f["snapshotBytes"] = r.varint("snapshotBytes")
    if p & 4:
        for k in STATS_SYNC:
            f[k] = r.varint(k)
    if p & 8:
        for k in STATS_TLS:
            f[k] = r.varint(k)
    if p & 16:
        for k in STATS_WEB:
            f[k] = r.varint(k)
    if p & 32:
        for k in STATS_USAGE:
            f[k] = r.varint(k)
        q = r.presence(0b111, "quotaPresence")
        for i, k in enumerate(STATS_QUOTAS):
            if q & (1 << i):
                f[k] = r.varint(k)
    return f


ENCODERS.update({"STATS": enc_stats, "STATS_REPORT": enc_stats_report})
DECODERS.update({"STATS": dec_stats, "STATS_REPORT": dec_stats_report})


def build_stats():
    valid("stats", "STATS: empty body.", "STATS", 40, {})
    busy = {
        "uptimeSeconds": 86461, "connectionsOpen": 1000, "connectionsTotal": 25000,
        "connectionsRejected": 3, "connectionsIdleClosed": 120, "connectionsDroppedForOutput": 1,
        "readPauses": 17, "inFlightPauses": 0, "bytesIn": 123456789, "bytesOut": 9876543210,
        "requests": [{"type": 0x01, "requests": 25000, "errors": 2},
                     {"type": 0x10, "requests": 5000, "errors": 0},
                     {"type": 0x20, "requests": 700000, "errors": 12},
                     {"type": 0x21, "requests": 200000, "errors": 40},
                     {"type": 0x50, "requests": 3, "errors": 0},
                     {"type": 0x7F, "requests": 1, "errors": 1}],
        "errors": [{"code": 3, "count": 1}, {"code": 5, "count": 12}, {"code": 6, "count": 40},
                   {"code": 9, "count": 2}],
        "latencyCount": 930004, "latencyP50Micros": 18, "latencyP90Micros": 41,
        "latencyP99Micros": 250, "latencyP999Micros": 1900, "latencyMaxMicros": 48213,
        "lists": 42, "items": 1000000,
        "logLastLSN": 200123, "logDurableLSN": 200120, "logSegments": 3, "logFailed": False,
        "snapshotLSN": 150000, "snapshotTime": 1767225600, "snapshotBytes": 8388608,
    }
    valid("stats-report", "STATS_REPORT of a busy server with a write-ahead log and a snapshot "
          "(presence 0x03); requests by type include one unknown type 0x7F.", "STATS_REPORT", 40, busy)
    idle = {k: 0 for k in STATS_HEAD + STATS_MIDDLE}
    idle.update({"uptimeSeconds": 5, "connectionsOpen": 1, "connectionsTotal": 1, "lists": 4, "items": 10,
                 "bytesIn": 47, "bytesOut": 54, "latencyCount": 1, "latencyP50Micros": 7,
                 "latencyP90Micros": 7, "latencyP99Micros": 7, "latencyP999Micros": 7,
                 "latencyMaxMicros": 7,
                 "requests": [{"type": 0x01, "requests": 1, "errors": 0}], "errors": []})
    valid("stats-report-no-durability", "STATS_REPORT of a server without a log or a snapshot "
          "(presence 0x00) and no ERROR answers yet (codeCount 0).", "STATS_REPORT", 41, idle)
    malformed("malformed-stats-report-type-count", "STATS_REPORT announcing 200 TypeCounts in a "
              "body that cannot hold them (each takes at least 3 bytes).", "response",
              frame(0xD0, 0, 9, b"\x00" * 10 + varint(200) + b"\x01\x01\x00"),
              "BAD_FIELD", "typeCount", "STATS_REPORT")
    syncing = dict(busy)
    syncing.update({"syncSubscribers": 250, "syncChangesPublished": 200123, "syncPushesDelivered": 4100000,
                    "syncSubscribersDropped": 2, "syncRetainedChanges": 41000, "syncRetainedBytes": 3500000})
    valid("stats-report-live-sync", "STATS_REPORT of the busy server of stats-report that also offers live "
          "sync (presence 0x07): 250 subscribed connections, 2 dropped at their push buffer.",
          "STATS_REPORT", 42, syncing)
    tls = dict(syncing)
    tls.update({"tlsHandshakes": 24000, "tlsNotTLS": 3, "tlsHandshakeFailures": 12, "tlsHandshakesTruncated": 5,
                "tlsHandshakeTimeouts": 2, "tlsRecordErrors": 1, "tlsOnPlainPort": 4})
    valid("stats-report-tls", "STATS_REPORT of the busy live-sync server of stats-report-live-sync with a TLS "
          "port (presence 0x0F): 24000 handshakes, 3 plaintext clients on the TLS port, 4 TLS clients on the "
          "plaintext port.", "STATS_REPORT", 43, tls)
    web = dict(idle)
    web.update({"webUpgrades": 310, "webHandshakesRefused": 4, "webOriginsRefused": 2, "webClosedProtocolError": 3,
                "webClosedUnsupportedData": 1, "webClosedInvalidPayload": 0, "webClosedMessageTooBig": 1,
                "webPingTimeouts": 7})
    valid("stats-report-websocket", "STATS_REPORT of a server with a web port and nothing else optional (presence "
          "0x10): 310 WebSocket upgrades, 4 refused as malformed and 2 for their Origin; connections closed with "
          "1002 (3), 1003 (1), 1009 (1) and 1001 after an unanswered ping (7).", "STATS_REPORT", 44, web)
    malformed("malformed-stats-report-presence", "STATS_REPORT with presence bit 6, which v1 does "
              "not define.", "response",
              frame(0xD0, 0, 9, enc_stats_report(idle)[:-1] + b"\x40"),
              "BAD_FIELD", "presence", "STATS_REPORT")
    valid("stats-usage", "STATS with options bit 0 USAGE: the report is to carry the usage and quotas of the "
          "connection's namespace.", "STATS", 45, {"options": STATS_USAGE_OPTION})
    accepted("stats-options-zero", "STATS whose body holds `options` 0: the same as an empty body, which is what "
             "encoders write (`canonicalHex`).", "STATS", 46, {}, b"\x00")
    usage = dict(idle)
    usage.update({"usageLists": 3, "usageItems": 1200, "usageBytes": 20480,
                  "quotaLists": 10, "quotaBytes": 1048576})
    valid("stats-report-usage", "STATS_REPORT answering STATS with option USAGE on a server without durability "
          "(presence 0x20): the namespace holds 3 lists, 1200 items and 20480 bytes; quotas of 10 lists and "
          "1048576 bytes, none on items (quotaPresence 0x05).", "STATS_REPORT", 45, usage)
    unbounded = dict(idle)
    unbounded.update({"usageLists": 0, "usageItems": 0, "usageBytes": 0})
    valid("stats-report-usage-no-quotas", "STATS_REPORT with the usage of an empty namespace on a server "
          "without quotas (presence 0x20, quotaPresence 0x00).", "STATS_REPORT", 47, unbounded)
    malformed("malformed-stats-report-quota-presence", "STATS_REPORT with usage whose quotaPresence has bit 3, "
              "which v1 does not define.", "response",
              frame(0xD0, 0, 9, enc_stats_report(unbounded)[:-1] + b"\x08"),
              "BAD_FIELD", "quotaPresence", "STATS_REPORT")


# ---------------------------------------------------------------------------
# Sections 6.11-6.15: live sync (SUBSCRIBE, UNSUBSCRIBE, CHANGES_SINCE and
# their answers, the CHANGE and SUBSCRIPTION_DROPPED pushes)
# ---------------------------------------------------------------------------

REQUEST_TYPES.update({"SUBSCRIBE": 0x30, "UNSUBSCRIBE": 0x31, "CHANGES_SINCE": 0x32})
RESPONSE_TYPES.update({0xB0: "SUBSCRIBED", 0xB1: "UNSUBSCRIBED", 0xB2: "CHANGES",
                       0xE0: "CHANGE", 0xE1: "SUBSCRIPTION_DROPPED"})
CHANGE_KINDS = {"LIST_CREATED": 1, "LIST_UPDATED": 2, "LIST_DELETED": 3, "PATCHED": 4, "OMITTED": 5}
SUBSCRIPTION_STATUSES = {"LIVE": 0, "RESYNC": 1, "FETCH": 2, "NOT_FOUND": 3}


def enc_applied_op(op):
    """**AppliedOp**: opcode, the item id as a plain id, then the fields."""
    name = op["op"]
    out = u8(OPCODES[name]) + varint(op["id"])
    if name == "INSERT":
        return out + varint(op["index"]) + enc_item_fields(op)
    assert name in ("SET_TEXT", "SET_CHECKED", "SET_DUE", "SET_REMIND", "SET_PRICE", "MOVE", "DELETE",
                    "SET_KEY"), name
    return out + enc_op_fields(name, op)


def dec_applied_op(r):
    code = r.u8("opcode")
    if code not in OPNAMES or OPNAMES[code] == "TOGGLE":
        raise bad("opcode")
    op = {"op": OPNAMES[code], "id": r.varint("id")}
    name = op["op"]
    if name == "INSERT":
        op["index"] = r.varint("index")
        return dec_item_fields(r, op)
    return dec_op_fields(r, name, op)


def enc_list_change(c):
    """**ListChange**: list, revision, kind, then the kind's fields."""
    out = varint(c["list"]) + varint(c["revision"]) + u8(c["kind"])
    if c["kind"] in (CHANGE_KINDS["LIST_CREATED"], CHANGE_KINDS["LIST_UPDATED"]):
        out += string(c["name"]) + string(c["icon"])
    elif c["kind"] == CHANGE_KINDS["PATCHED"]:
        out += varint(len(c["ops"])) + b"".join(enc_applied_op(op) for op in c["ops"])
    return out


def dec_list_change(r):
    c = {"list": r.varint("list"), "revision": r.varint("revision"), "kind": r.u8("kind")}
    if c["kind"] in (CHANGE_KINDS["LIST_CREATED"], CHANGE_KINDS["LIST_UPDATED"]):
        c["name"] = r.string("name")
        c["icon"] = r.string("icon")
    elif c["kind"] == CHANGE_KINDS["PATCHED"]:
        n = r.count("ops", 2)
        c["ops"] = [dec_applied_op(r) for _ in range(n)]
    elif c["kind"] not in CHANGE_KINDS.values():
        raise bad("kind")
    return c


def enc_subscribe(f):
    out = u8(f["scope"]) + varint(len(f["lists"]))
    for e in f["lists"]:
        out += varint(e["list"]) + u8(1 if "revision" in e else 0)
        if "revision" in e:
            out += varint(e["revision"])
    return out


def dec_subscribe(r):
    f = {"scope": r.u8("scope")}
    if f["scope"] > 1:
        raise bad("scope")
    n = r.count("count", 2)
    f["lists"] = []
    for _ in range(n):
        e = {"list": r.varint("list")}
        if r.presence(0b1) & 1:
            e["revision"] = r.varint("revision")
        f["lists"].append(e)
    return f


def enc_subscribed(f):
    return varint(len(f["lists"])) + b"".join(
        varint(e["list"]) + varint(e["revision"]) + u8(e["status"]) for e in f["lists"])


def dec_subscribed(r):
    n = r.count("count", 3)
    lists = []
    for _ in range(n):
        e = {"list": r.varint("list"), "revision": r.varint("revision"), "status": r.u8("status")}
        if e["status"] not in SUBSCRIPTION_STATUSES.values():
            raise bad("status")
        lists.append(e)
    return {"lists": lists}


def enc_unsubscribe(f):
    return u8(f["scope"]) + varint(len(f["lists"])) + b"".join(varint(l) for l in f["lists"])


def dec_unsubscribe(r):
    f = {"scope": r.u8("scope")}
    if f["scope"] > 1:
        raise bad("scope")
    n = r.count("count", 1)
    f["lists"] = [r.varint("list") for _ in range(n)]
    return f


def dec_changes_since(r):
    # A limit of 0 decodes: the server refuses it when it carries the request
    # out (SPEC.md sections 2 and 6.13), like GET_PAGE limit 0.
    return {"list": r.varint("list"), "revision": r.varint("revision"), "limit": r.varint("limit")}


def dec_changes(r):
    f = {"list": r.varint("list"), "revision": r.varint("revision")}
    n = r.count("count", 3)
    f["changes"] = [dec_list_change(r) for _ in range(n)]
    return f


ENCODERS.update({
    "SUBSCRIBE": enc_subscribe,
    "UNSUBSCRIBE": enc_unsubscribe,
    "CHANGES_SINCE": lambda f: varint(f["list"]) + varint(f["revision"]) + varint(f["limit"]),
    "SUBSCRIBED": enc_subscribed,
    "UNSUBSCRIBED": lambda f: b"",
    "CHANGES": lambda f: (varint(f["list"]) + varint(f["revision"]) + varint(len(f["changes"])) +
                          b"".join(enc_list_change(c) for c in f["changes"])),
    "CHANGE": enc_list_change,
    "SUBSCRIPTION_DROPPED": lambda f: u8(f["reason"]) + string(f["message"]),
})
DECODERS.update({
    "SUBSCRIBE": dec_subscribe,
    "UNSUBSCRIBE": dec_unsubscribe,
    "CHANGES_SINCE": dec_changes_since,
    "SUBSCRIBED": dec_subscribed,
    "UNSUBSCRIBED": lambda r: {},
    "CHANGES": dec_changes,
    "CHANGE": dec_list_change,
    "SUBSCRIPTION_DROPPED": lambda r: {"reason": r.u8("reason"), "message": r.string("message")},
})


def applied_insert(item_id, index, text, **kw):
    op = {"op": "INSERT", "id": item_id, "index": index}
    op.update(item(text, **kw))
    return op


def build_sync():
    k = CHANGE_KINDS
    push = 0  # pushes carry request id 0
    # -- 6.8: the idempotency key of PATCH ------------------------------------
    valid("patch-idempotency-key", "PATCH carrying an idempotency key (presence 0x02): client id "
          "0x12345678abcde (7 bytes as a varint) and sequence 300.",
          "PATCH", 60, {"list": 2, "client": 0x12345678ABCDE, "sequence": 300,
                        "ops": [insert(1, 2, "Milk")]})
    valid("patch-idempotency-key-and-base", "PATCH with both baseRevision and an idempotency key "
          "(presence 0x03): baseRevision comes first.", "PATCH", 61,
          {"list": 2, "baseRevision": 14, "client": 7, "sequence": 1,
           "ops": [{"op": "SET_CHECKED", "ref": ID(5), "checked": True}]})
    valid("error-resync-required", "ERROR RESYNC_REQUIRED answering CHANGES_SINCE from a revision "
          "whose changes are no longer retained; `revision` is the list's current one.", "ERROR", 70,
          {"code": 13, "message": "list 2: the changes after revision 3 are no longer retained; "
                                  "read the list again", "revision": 1200})
    # -- 6.11 SUBSCRIBE / SUBSCRIBED ----------------------------------------------
    valid("subscribe-lists", "SUBSCRIBE to lists 2 (the client has revision 140) and 5 (from now).",
          "SUBSCRIBE", 62, {"scope": 0, "lists": [{"list": 2, "revision": 140}, {"list": 5}]})
    valid("subscribe-all-lists", "SUBSCRIBE to every list of the namespace (scope 1), with the "
          "revision the client has of list 2.", "SUBSCRIBE", 63,
          {"scope": 1, "lists": [{"list": 2, "revision": 140}]})
    valid("subscribe-all-lists-no-entries", "SUBSCRIBE to every list of the namespace, from now.",
          "SUBSCRIBE", 64, {"scope": 1, "lists": []})
    valid("subscribed", "SUBSCRIBED with one entry of each status: list 2 live (its catch-up "
          "pushes follow), list 3 resync, list 4 fetch, list 9 not found.", "SUBSCRIBED", 62,
          {"lists": [{"list": 2, "revision": 142, "status": 0}, {"list": 3, "revision": 7, "status": 1},
                     {"list": 4, "revision": 90000, "status": 2}, {"list": 9, "revision": 0, "status": 3}]})
    valid("subscribe-duplicate", "SUBSCRIBE naming list 5 twice (revision 10, then revision 3) "
          "around list 2: the first entry of list 5 counts, the second is ignored.", "SUBSCRIBE", 71,
          {"scope": 0, "lists": [{"list": 5, "revision": 10}, {"list": 2}, {"list": 5, "revision": 3}]})
    valid("subscribed-duplicate", "SUBSCRIBED answering subscribe-duplicate: one entry per list, in "
          "the order the request first named them (5, then 2).", "SUBSCRIBED", 71,
          {"lists": [{"list": 5, "revision": 10, "status": 0}, {"list": 2, "revision": 140, "status": 0}]})
    # -- 6.12 UNSUBSCRIBE / UNSUBSCRIBED -------------------------------------------
    valid("unsubscribe", "UNSUBSCRIBE from lists 2 and 5.", "UNSUBSCRIBE", 65, {"scope": 0, "lists": [2, 5]})
    valid("unsubscribe-everything", "UNSUBSCRIBE from every subscription of the connection (scope 1).",
          "UNSUBSCRIBE", 66, {"scope": 1, "lists": []})
    valid("unsubscribed", "UNSUBSCRIBED: empty body.", "UNSUBSCRIBED", 65, {})
    # -- 6.13 CHANGES_SINCE / CHANGES ----------------------------------------------
    valid("changes-since", "CHANGES_SINCE list 2 after revision 140, at most 100 changes.",
          "CHANGES_SINCE", 67, {"list": 2, "revision": 140, "limit": 100})
    valid("changes", "CHANGES: list 2 is at revision 143; the changes 141 to 143.", "CHANGES", 67,
          {"list": 2, "revision": 143, "changes": [
              {"list": 2, "revision": 141, "kind": k["PATCHED"],
               "ops": [{"op": "SET_CHECKED", "id": 5, "checked": True}]},
              {"list": 2, "revision": 142, "kind": k["LIST_UPDATED"], "name": "Weekend groceries",
               "icon": "Groceries"},
              {"list": 2, "revision": 143, "kind": k["PATCHED"],
               "ops": [applied_insert(31, 0, "Bread"), {"op": "MOVE", "id": 12, "toIndex": 3}]}]})
    valid("changes-since-creation", "CHANGES_SINCE list 12 after revision 0: from before the "
          "list existed.", "CHANGES_SINCE", 69, {"list": 12, "revision": 0, "limit": 100})
    valid("changes-from-creation", "CHANGES answering changes-since-creation while the list's "
          "whole history is retained: its creation (LIST_CREATED, revision 1) is a change like any "
          "other, then a patch too large for one frame, sent as OMITTED here as in a push.",
          "CHANGES", 69, {"list": 12, "revision": 2, "changes": [
              {"list": 12, "revision": 1, "kind": k["LIST_CREATED"], "name": "Trip to Rome", "icon": "Trips"},
              {"list": 12, "revision": 2, "kind": k["OMITTED"]}]})
    valid("changes-empty", "CHANGES with no change: the client is at the current revision 143.",
          "CHANGES", 68, {"list": 2, "revision": 143, "changes": []})
    # -- 6.14 CHANGE ---------------------------------------------------------------
    valid("change-patched", "CHANGE push: list 2 at revision 141 after a patch that used every "
          "applied opcode (a TOGGLE travels as the SET_CHECKED it resolved to).", "CHANGE", push,
          {"list": 2, "revision": 141, "kind": k["PATCHED"], "ops": [
              applied_insert(31, 0, "Bread", due=MAY_1, price=249),
              applied_insert(32, 1, "Eggs", checked=True, remind=True),
              {"op": "SET_TEXT", "id": 5, "text": "Oat milk"},
              {"op": "SET_CHECKED", "id": 6, "checked": False},
              {"op": "SET_DUE", "id": 6, "present": True, "due": MOON},
              {"op": "SET_DUE", "id": 7, "present": False},
              {"op": "SET_REMIND", "id": 7, "remind": True},
              {"op": "SET_PRICE", "id": 8, "present": True, "price": -150},
              {"op": "SET_PRICE", "id": 9, "present": False},
              {"op": "DELETE", "id": 10},
              {"op": "MOVE", "id": 31, "toIndex": 4}]})
    valid("change-list-created", "CHANGE push to an all-lists subscriber: list 12 was created.",
          "CHANGE", push, {"list": 12, "revision": 1, "kind": k["LIST_CREATED"], "name": "Trip to Rome",
                           "icon": "Trips"})
    valid("change-list-updated", "CHANGE push: list 12 renamed (its icon unchanged).", "CHANGE", push,
          {"list": 12, "revision": 2, "kind": k["LIST_UPDATED"], "name": "Trip to Roma", "icon": "Trips"})
    valid("change-list-deleted", "CHANGE push: list 12 was deleted at revision 3; no further push "
          "for it follows.", "CHANGE", push, {"list": 12, "revision": 3, "kind": k["LIST_DELETED"]})
    valid("change-omitted", "CHANGE push whose operations were too large for one frame: list 2 is "
          "at revision 144, read it again.", "CHANGE", push, {"list": 2, "revision": 144, "kind": k["OMITTED"]})
    # -- 6.15 SUBSCRIPTION_DROPPED ----------------------------------------------------
    valid("subscription-dropped", "SUBSCRIPTION_DROPPED: the client left more than the push buffer "
          "unread (reason 1, SLOW_CONSUMER).", "SUBSCRIPTION_DROPPED", push,
          {"reason": 1, "message": "more than 4194304 bytes of pushes were waiting for this connection; "
                                   "subscribe again from your last revisions, or use CHANGES_SINCE"})
    # -- malformed ------------------------------------------------------------------
    def req(msg, body, request=30):
        return frame(REQUEST_TYPES[msg], 0, request, body)

    malformed("malformed-subscribe-scope", "SUBSCRIBE with scope 2.", "request",
              req("SUBSCRIBE", u8(2) + varint(0)), "BAD_FIELD", "scope", "SUBSCRIBE")
    malformed("malformed-subscribe-count", "SUBSCRIBE announcing 10 entries in 3 bytes (each takes "
              "at least 2).", "request", req("SUBSCRIBE", u8(0) + varint(10) + varint(2) + u8(0) + varint(3)),
              "BAD_FIELD", "count", "SUBSCRIBE")
    malformed("malformed-subscribe-presence", "SUBSCRIBE entry with presence 0x02.", "request",
              req("SUBSCRIBE", u8(0) + varint(1) + varint(2) + u8(2) + varint(3)),
              "BAD_FIELD", "presence", "SUBSCRIBE")
    malformed("malformed-unsubscribe-scope", "UNSUBSCRIBE with scope 3.", "request",
              req("UNSUBSCRIBE", u8(3) + varint(0)), "BAD_FIELD", "scope", "UNSUBSCRIBE")
    valid("changes-since-limit-zero", "CHANGES_SINCE with limit 0. It decodes: the server refuses it "
          "when it carries it out (BAD_FIELD limit; HELLO_REQUIRED before the handshake), like GET_PAGE "
          "limit 0 and a PATCH of 0 operations (SPEC.md section 2).", "CHANGES_SINCE", 30,
          {"list": 2, "revision": 140, "limit": 0})
    malformed("malformed-subscribed-status", "SUBSCRIBED entry with status 4.", "response",
              frame(0xB0, 0, 62, varint(1) + varint(2) + varint(142) + u8(4)),
              "BAD_FIELD", "status", "SUBSCRIBED")
    malformed("malformed-change-kind", "CHANGE push with kind 6.", "response",
              frame(0xE0, 0, 0, varint(2) + varint(141) + u8(6)), "BAD_FIELD", "kind", "CHANGE")
    malformed("malformed-change-toggle", "CHANGE push whose operation is TOGGLE (0x04), which is "
              "never an applied operation.", "response",
              frame(0xE0, 0, 0, varint(2) + varint(141) + u8(4) + varint(1) + u8(4) + varint(5)),
              "BAD_FIELD", "opcode", "CHANGE")
    malformed("malformed-change-ops-count", "CHANGE push announcing 50 operations in 4 bytes (each "
              "takes at least 2).", "response",
              frame(0xE0, 0, 0, varint(2) + varint(141) + u8(4) + varint(50) + u8(8) + varint(5) + u8(8) + varint(6)),
              "BAD_FIELD", "ops", "CHANGE")
    malformed("malformed-changes-truncated", "CHANGES whose second change is cut off after its revision.",
              "response", frame(0xB2, 0, 67, varint(2) + varint(143) + varint(2) +
                                enc_list_change({"list": 2, "revision": 142, "kind": k["LIST_DELETED"]}) +
                                varint(2) + varint(143)),
              "BAD_FIELD", "kind", "CHANGES")
    malformed("malformed-patch-key-truncated", "PATCH whose presence announces an idempotency key "
              "but the body ends after the client id.", "request",
              req("PATCH", varint(2) + u8(2) + varint(7)), "BAD_FIELD", "sequence", "PATCH")


# ---------------------------------------------------------------------------
# Sections 6.16-6.17: EXPORT and IMPORT (snapshots over the protocol)
# ---------------------------------------------------------------------------

REQUEST_TYPES.update({"EXPORT": 0x40, "IMPORT": 0x41})
RESPONSE_TYPES.update({0xC0: "EXPORT_CHUNK", 0xC1: "IMPORT_OK"})
EXPORT_ACTIONS = {"START": 0, "NEXT": 1, "CANCEL": 2}
EXPORT_STATUSES = {"MORE": 0, "END": 1, "CANCELLED": 2}
IMPORT_ACTIONS = {"BEGIN": 0, "DATA": 1, "END": 2, "CANCEL": 3}
IMPORT_MODES = {"MERGE": 0, "REPLACE": 1}
IMPORT_STATUSES = {"STARTED": 0, "RECEIVED": 1, "APPLIED": 2, "CANCELLED": 3}
CHUNK_FIELDS = ["listCount", "itemCount", "itemsWritten", "rawBytes"]
IMPORT_OK_FIELDS = ["sequence", "rawBytes", "lists", "items", "deleted"]


def enc_export(f):
    out = u8(f["action"])
    if f["action"] == EXPORT_ACTIONS["START"]:
        out += varint(f["chunkBytes"]) + varint(len(f["lists"])) + b"".join(varint(i) for i in f["lists"])
    elif f["action"] == EXPORT_ACTIONS["NEXT"]:
        out += varint(f["sequence"])
    return out


def dec_export(r):
    action = r.u8("action")
    if action == EXPORT_ACTIONS["START"]:
        chunk = r.varint("chunkBytes")
        n = r.count("count", 1)
        return {"action": action, "chunkBytes": chunk, "lists": [r.varint("list") for _ in range(n)]}
    if action == EXPORT_ACTIONS["NEXT"]:
        return {"action": action, "sequence": r.varint("sequence")}
    if action == EXPORT_ACTIONS["CANCEL"]:
        return {"action": action}
    raise bad("action")


def enc_export_chunk(f):
    return (varint(f["sequence"]) + u8(f["status"]) + b"".join(varint(f[k]) for k in CHUNK_FIELDS) +
            byte_run(f["data"]))


def dec_export_chunk(r):
    f = {"sequence": r.varint("sequence"), "status": r.u8("status")}
    if f["status"] not in EXPORT_STATUSES.values():
        raise bad("status")
    for k in CHUNK_FIELDS:
        f[k] = r.varint(k)
    f["data"] = r.raw("data").hex()
    return f


def enc_import(f):
    out = u8(f["action"])
    if f["action"] == IMPORT_ACTIONS["BEGIN"]:
        out += u8(f["mode"])
    elif f["action"] == IMPORT_ACTIONS["DATA"]:
        out += varint(f["sequence"]) + byte_run(f["data"])
    return out


def dec_import(r):
    action = r.u8("action")
    if action == IMPORT_ACTIONS["BEGIN"]:
        mode = r.u8("mode")
        if mode not in IMPORT_MODES.values():
            raise bad("mode")
        return {"action": action, "mode": mode}
    if action == IMPORT_ACTIONS["DATA"]:
        return {"action": action, "sequence": r.varint("sequence"), "data": r.raw("data").hex()}
    if action in (IMPORT_ACTIONS["END"], IMPORT_ACTIONS["CANCEL"]):
        return {"action": action}
    raise bad("action")


def enc_import_ok(f):
    out = u8(f["status"]) + b"".join(varint(f[k]) for k in IMPORT_OK_FIELDS) + varint(len(f["pairs"]))
    for p in f["pairs"]:
        out += varint(p["from"]) + varint(p["to"])
    return out


def dec_import_ok(r):
    f = {"status": r.u8("status")}
    if f["status"] not in IMPORT_STATUSES.values():
        raise bad("status")
    for k in IMPORT_OK_FIELDS:
        f[k] = r.varint(k)
    n = r.count("count", 2)
    f["pairs"] = [{"from": r.varint("from"), "to": r.varint("to")} for _ in range(n)]
    return f


ENCODERS.update({"EXPORT": enc_export, "EXPORT_CHUNK": enc_export_chunk, "IMPORT": enc_import,
                 "IMPORT_OK": enc_import_ok})
DECODERS.update({"EXPORT": dec_export, "EXPORT_CHUNK": dec_export_chunk, "IMPORT": dec_import,
                 "IMPORT_OK": dec_import_ok})


# A whole snapshot file (Protocol/SNAPSHOT.md sections 2-3), made here from
# that document alone, so that a chunk vector carries a real, complete file.

def snapshot_record(record_type, body):
    return u8(record_type) + varint(len(body)) + body


def snapshot_content(lists, created_at, next_list_id, source="checklistd/1.0 EXPORT", start_lsn=0, end_lsn=0,
                     idempotency=()):
    """preamble HEADER (LIST ITEM*)* IDEMPOTENCY* TRAILER; `lists` are dicts
    with items, `idempotency` dicts of SNAPSHOT.md section 3.8 (one record
    each, after the lists)."""
    items = sum(len(l["items"]) for l in lists)
    out = b"CKSS\r\n\x1a\n" + b"\x00\x01"
    out += snapshot_record(0x01, zigzag(created_at) + string(source) + varint(len(lists)) + varint(items) +
                           varint(start_lsn) + varint(next_list_id))
    for l in lists:
        out += snapshot_record(0x02, string(l["namespace"]) + varint(l["id"]) + string(l["name"]) +
                               string(l["icon"]) + varint(l["revision"]) + varint(l["nextItemID"]) +
                               varint(len(l["items"])))
        for it in l["items"]:
            out += snapshot_record(0x03, varint(it["id"]) + enc_item_fields(it))
    for c in idempotency:
        out += snapshot_record(0x40, enc_snapshot_idempotency(c))
    trailer = varint(len(lists)) + varint(items) + varint(end_lsn) + varint(len(out)) + u32be(zlib.crc32(out))
    return out + snapshot_record(0x04, trailer)


def enc_snapshot_idempotency(c):
    """SNAPSHOT.md section 3.8: namespace, client, floor, count, then per
    answer sequence, list, revision, runCount and (first, length) runs."""
    out = string(c["namespace"]) + varint(c["client"]) + varint(c["floor"]) + varint(len(c["answers"]))
    for a in c["answers"]:
        out += varint(a["sequence"]) + varint(a["list"]) + varint(a["revision"]) + varint(len(a["inserted"]))
        for run in a["inserted"]:
            out += varint(run["first"]) + varint(run["count"])
    return out


class SnapshotError(Exception):
    pass


def dec_snapshot_idempotency(body):
    """The reverse of enc_snapshot_idempotency, with the bounds of section 3.8:
    counts the rest of the body cannot hold, ids and runs of 0, runs past
    2^64-1 and answers over 2^32-1 ids are refused."""
    r = Reader(body)
    c = {"namespace": r.string("namespace"), "client": r.varint("client"), "floor": r.varint("floor"), "answers": []}
    for _ in range(r.count("count", 4)):
        a = {"sequence": r.varint("sequence"), "list": r.varint("list"), "revision": r.varint("revision"),
             "inserted": []}
        if a["list"] == 0 or a["revision"] == 0:
            raise bad("list" if a["list"] == 0 else "revision")
        total = 0
        for _ in range(r.count("runs", 2)):
            run = {"first": r.varint("first"), "count": r.varint("length")}
            if run["first"] == 0 or run["count"] == 0 or run["first"] + run["count"] - 1 >= 1 << 64:
                raise bad("first" if run["first"] == 0 else "length")
            total += run["count"]
            if total > (1 << 32) - 1:
                raise bad("length")
            a["inserted"].append(run)
        c["answers"].append(a)
    return c


def read_snapshot_content(content, knows_idempotency=True):
    """An independent reader of a snapshot's content (SNAPSHOT.md section 3):
    the meaning as {header, lists, idempotency, trailer}. A reader that does
    not know type 0x40 (knows_idempotency False) skips it like any extension."""
    if content[:8] != b"CKSS\r\n\x1a\n" or content[8:10] != b"\x00\x01":
        raise SnapshotError("bad preamble")
    pos, meaning, items_left = 10, {"lists": [], "idempotency": []}, 0
    while True:
        r = Reader(content[pos:])
        record_type = r.u8("type")
        length = r.varint("length")
        body = r.data[r.pos:r.pos + length]
        if len(body) != length:
            raise SnapshotError("truncated")
        b = Reader(body)
        if "header" not in meaning:
            if record_type != 0x01:
                raise SnapshotError("first record is not HEADER")
            meaning["header"] = {"createdAt": b.zigzag("createdAt"), "source": b.string("source"),
                                 "listCount": b.varint("listCount"), "itemCount": b.varint("itemCount"),
                                 "startLSN": b.varint("startLSN"), "nextListID": b.varint("nextListID")}
        elif record_type == 0x02:
            assert items_left == 0
            l = {"namespace": b.string("namespace"), "id": b.varint("id"), "name": b.string("name"),
                 "icon": b.string("icon"), "revision": b.varint("revision"), "nextItemID": b.varint("nextItemID"),
                 "items": []}
            items_left = b.varint("itemCount")
            meaning["lists"].append(l)
        elif record_type == 0x03:
            assert items_left > 0
            items_left -= 1
            meaning["lists"][-1]["items"].append(dec_item_fields(b, {"id": b.varint("id")}))
        elif record_type == 0x04:
            assert items_left == 0
            t = {"listCount": b.varint("listCount"), "itemCount": b.varint("itemCount"), "endLSN": b.varint("endLSN"),
                 "contentBytes": b.varint("contentBytes"), "crc32": int.from_bytes(body[b.pos:b.pos + 4], "big")}
            if (t["contentBytes"], t["crc32"]) != (pos, zlib.crc32(content[:pos])):
                raise SnapshotError("checksum")
            if (t["listCount"], t["itemCount"]) != (len(meaning["lists"]),
                                                    sum(len(l["items"]) for l in meaning["lists"])):
                raise SnapshotError("counts")
            if pos + r.pos + length != len(content):
                raise SnapshotError("bytes after the trailer")
            meaning["trailer"] = t
            return meaning
        elif record_type == 0x40 and knows_idempotency:
            meaning["idempotency"].append(dec_snapshot_idempotency(body))
        elif not 0x40 <= record_type <= 0x7F:
            raise SnapshotError("unknown record type %d" % record_type)
        pos += r.pos + length


def gzip_member(content):
    """RFC 1952: header (no name, MTIME 0, OS 255), raw deflate, CRC-32, ISIZE."""
    raw_deflate = deflate_fixed(content)[2:-4]      # a zlib stream without its header and Adler-32
    member = (b"\x1f\x8b\x08\x00" + b"\x00\x00\x00\x00" + b"\x00\xff" + raw_deflate +
              zlib.crc32(content).to_bytes(4, "little") + len(content).to_bytes(4, "little"))
    d = zlib.decompressobj(31)
    assert d.decompress(member) == content and d.eof and not d.unused_data
    return member


GROCERIES = {"namespace": "default", "id": 2, "name": "Groceries", "icon": "Groceries", "revision": 4,
             "nextItemID": 4, "items": [item("Milk", id=1, checked=True), item("Eggs", id=3, price=249)]}
SNAPSHOT_CONTENT = snapshot_content([GROCERIES], MAY_1, 3)
SNAPSHOT_FILE = gzip_member(SNAPSHOT_CONTENT)


# Protocol/vectors/snapshot/idempotency.*: a server's own snapshot carrying its
# memory of idempotency keys (SNAPSHOT.md section 3.8). The JSON gives the
# meaning (header, lists, idempotency, trailer) and `raw`, the content in hex.

IDEMPOTENCY_LISTS = [
    {"namespace": "default", "id": 1, "name": "Groceries", "icon": "Groceries", "revision": 5, "nextItemID": 4,
     # Bread carries a client key: ItemFields flag bit 4 in its ITEM record (SNAPSHOT.md section 3.5).
     "items": [item("Milk", id=1, checked=True), item("Eggs", id=2, price=249),
               item("Bread", id=3, clientKey="0C5A3E1B-9F2D-4E7A-8B61-3D2F5A7C9E10")]},
    {"namespace": "family", "id": 3, "name": "To Do", "icon": "Chores", "revision": 3, "nextItemID": 3,
     "items": [item("Walk the dog", id=2)]},
]
IDEMPOTENCY_CLIENTS = [
    # Least recently used first. A client whose answers were all forgotten: only its floor.
    {"namespace": "family", "client": 0x1234, "floor": 3, "answers": []},
    {"namespace": "default", "client": 7, "floor": 0, "answers": [
        {"sequence": 1, "list": 1, "revision": 2, "inserted": [{"first": 1, "count": 3}]},
        {"sequence": 2, "list": 1, "revision": 3, "inserted": []},
        {"sequence": 4, "list": 1, "revision": 5, "inserted": []},
    ]},
    # The largest client id JSON numbers carry exactly; two runs (ids that do not go up by one).
    {"namespace": "family", "client": (1 << 53) - 1, "floor": 0, "answers": [
        {"sequence": 1 << 40, "list": 3, "revision": 2, "inserted": [{"first": 2, "count": 1}, {"first": 1, "count": 1}]},
    ]},
]


def build_snapshot_vectors():
    """{file name: bytes} of Protocol/vectors/snapshot/ that this script owns."""
    header = {"createdAt": MAY_1, "source": "checklistd/1.0 vectors", "listCount": 2, "itemCount": 4,
              "startLSN": 12, "nextListID": 4}
    content = snapshot_content(IDEMPOTENCY_LISTS, header["createdAt"], header["nextListID"], source=header["source"],
                               start_lsn=header["startLSN"], end_lsn=12, idempotency=IDEMPOTENCY_CLIENTS)
    meaning = read_snapshot_content(content)
    assert meaning["header"] == header and meaning["lists"] == IDEMPOTENCY_LISTS
    assert meaning["idempotency"] == IDEMPOTENCY_CLIENTS
    # A reader that does not know the record skips it and reads the same lists.
    older = read_snapshot_content(content, knows_idempotency=False)
    assert older["lists"] == IDEMPOTENCY_LISTS and older["idempotency"] == [] and older["trailer"] == meaning["trailer"]
    # Hostile counts are refused before anything is allocated.
    for hostile, field in [(string("x") + varint(1) + varint(0) + varint(1 << 40), "count"),
                           (string("x") + varint(1) + varint(0) + varint(1) + varint(1) + varint(1) + varint(2) +
                            varint(1 << 30), "runs"),
                           (string("x") + varint(1) + varint(0) + varint(1) + varint(1) + varint(1) + varint(2) +
                            varint(1) + varint(1) + varint(1 << 32), "length")]:
        try:
            dec_snapshot_idempotency(hostile + b"\x00" * 8)
            raise AssertionError("hostile record decoded: " + field)
        except WireError as e:
            assert e.field == field, (field, e.field)
    vector = {"description": "A server's own snapshot (Protocol/SNAPSHOT.md) of two lists with its memory of "
                             "idempotency keys: three IDEMPOTENCY records (0x40, section 3.8) after the lists, "
                             "least recently used client first; item 3 of list 1 has a client key (section 3.5). "
                             "`raw` is the uncompressed content.",
              "file": "idempotency.ckss.gz", "header": header, "lists": IDEMPOTENCY_LISTS,
              "idempotency": IDEMPOTENCY_CLIENTS, "trailer": meaning["trailer"], "raw": content.hex()}
    return {"idempotency.ckss.gz": gzip_member(content), "idempotency.json": render(vector).encode("utf-8")}


def build_snapshots():
    ea, es, ia, im, ist = EXPORT_ACTIONS, EXPORT_STATUSES, IMPORT_ACTIONS, IMPORT_MODES, IMPORT_STATUSES
    # -- 6.16 EXPORT / EXPORT_CHUNK ----------------------------------------------------
    valid("export-start-all", "EXPORT START of every list of the namespace (count 0), in chunks of the "
          "server's size (chunkBytes 0).", "EXPORT", 80, {"action": ea["START"], "chunkBytes": 0, "lists": []})
    valid("export-start-lists", "EXPORT START of lists 2 and 5 (SPEC.md section 6.16, byte by byte).",
          "EXPORT", 80, {"action": ea["START"], "chunkBytes": 0, "lists": [2, 5]})
    valid("export-start-chunk-bytes", "EXPORT START of every list in chunks of at most 65536 data bytes.",
          "EXPORT", 80, {"action": ea["START"], "chunkBytes": 65536, "lists": []})
    valid("export-next", "EXPORT NEXT: chunk 3 please.", "EXPORT", 81, {"action": ea["NEXT"], "sequence": 3})
    valid("export-cancel", "EXPORT CANCEL: end the running export early.", "EXPORT", 82, {"action": ea["CANCEL"]})
    split = 20
    valid("export-chunk-more", "EXPORT_CHUNK 0 (the answer to START), status MORE: the first %d bytes of "
          "the snapshot file of export-chunk-end; the rest follows in chunk 1." % split, "EXPORT_CHUNK", 80,
          {"sequence": 0, "status": es["MORE"], "listCount": 1, "itemCount": 2, "itemsWritten": 2,
           "rawBytes": len(SNAPSHOT_CONTENT), "data": SNAPSHOT_FILE[:split].hex()})
    valid("export-chunk-end", "EXPORT_CHUNK 1, status END: the rest of a complete snapshot file (gzip) "
          "of list 2 \"Groceries\" (revision 4, next item id 4) with items 1 \"Milk\" (checked) and 3 "
          "\"Eggs\" (price 249); the data of chunks 0 and 1 together is that file. Its content "
          "(SNAPSHOT.md) is %d bytes." % len(SNAPSHOT_CONTENT), "EXPORT_CHUNK", 81,
          {"sequence": 1, "status": es["END"], "listCount": 1, "itemCount": 2, "itemsWritten": 2,
           "rawBytes": len(SNAPSHOT_CONTENT), "data": SNAPSHOT_FILE[split:].hex()})
    valid("export-chunk-past-end", "EXPORT_CHUNK answering a NEXT for chunk 2, which the client pipelined "
          "past the END chunk of export-chunk-end: status END again, that export's counts, no data. Not "
          "an error (SPEC.md section 6.16); the file is complete already.", "EXPORT_CHUNK", 83,
          {"sequence": 2, "status": es["END"], "listCount": 1, "itemCount": 2, "itemsWritten": 2,
           "rawBytes": len(SNAPSHOT_CONTENT), "data": ""})
    valid("export-chunk-cancelled", "EXPORT_CHUNK answering CANCEL: status CANCELLED, no data.",
          "EXPORT_CHUNK", 82, {"sequence": 2, "status": es["CANCELLED"], "listCount": 0, "itemCount": 0,
                               "itemsWritten": 0, "rawBytes": 0, "data": ""})
    # -- 6.17 IMPORT / IMPORT_OK --------------------------------------------------------
    valid("import-begin-merge", "IMPORT BEGIN in mode MERGE.", "IMPORT", 90, {"action": ia["BEGIN"], "mode": im["MERGE"]})
    valid("import-begin-replace", "IMPORT BEGIN in mode REPLACE (SPEC.md section 6.17, byte by byte).",
          "IMPORT", 90, {"action": ia["BEGIN"], "mode": im["REPLACE"]})
    valid("import-data", "IMPORT DATA 1: a whole snapshot file in one chunk (the file of "
          "export-chunk-more and export-chunk-end).", "IMPORT", 91,
          {"action": ia["DATA"], "sequence": 1, "data": SNAPSHOT_FILE.hex()})
    valid("import-end", "IMPORT END: the file is complete; apply it.", "IMPORT", 92, {"action": ia["END"]})
    valid("import-cancel", "IMPORT CANCEL: drop the import.", "IMPORT", 93, {"action": ia["CANCEL"]})
    valid("import-ok-started", "IMPORT_OK answering BEGIN.", "IMPORT_OK", 90,
          {"status": ist["STARTED"], "sequence": 0, "rawBytes": 0, "lists": 0, "items": 0, "deleted": 0, "pairs": []})
    valid("import-ok-received", "IMPORT_OK answering DATA 1: the whole content decoded, 1 list and 2 items "
          "staged.", "IMPORT_OK", 91,
          {"status": ist["RECEIVED"], "sequence": 1, "rawBytes": len(SNAPSHOT_CONTENT), "lists": 1, "items": 2,
           "deleted": 0, "pairs": []})
    valid("import-ok-applied", "IMPORT_OK answering END in mode REPLACE: 3 lists and 1200 items applied, 2 "
          "lists deleted; the snapshot's lists 2 and 9 were not free and became 14 and 15.", "IMPORT_OK", 92,
          {"status": ist["APPLIED"], "sequence": 7, "rawBytes": 52000, "lists": 3, "items": 1200, "deleted": 2,
           "pairs": [{"from": 2, "to": 14}, {"from": 9, "to": 15}]})
    valid("import-ok-cancelled", "IMPORT_OK answering CANCEL.", "IMPORT_OK", 93,
          {"status": ist["CANCELLED"], "sequence": 3, "rawBytes": 0, "lists": 0, "items": 0, "deleted": 0, "pairs": []})
    valid("error-import-corrupt", "ERROR answering IMPORT END: the snapshot ends before its trailer.",
          "ERROR", 92, {"code": ERROR_NUMBERS["BAD_FIELD"], "field": "data",
                        "message": "TRUNCATED_SNAPSHOT: IMPORT stream at offset 4096: gzip stream ends early (truncated) "
                                   "(uncompressed offset 4096, compressed offset 1811)"})
    valid("error-import-bomb", "ERROR answering IMPORT DATA: the snapshot inflates more than 200:1.",
          "ERROR", 91, {"code": ERROR_NUMBERS["LIMIT_EXCEEDED"], "field": "data",
                        "message": "DECOMPRESSION_LIMIT: IMPORT stream at offset 16842752: inflates more than 200:1"})
    valid("error-import-overloaded", "ERROR answering IMPORT BEGIN while the server receives as many imports "
          "as it allows.", "ERROR", 90, {"code": ERROR_NUMBERS["OVERLOADED"],
                                        "message": "the server is receiving 2 imports already; try again later"})
    valid("error-unavailable", "ERROR UNAVAILABLE answering PATCH while the server's database is "
          "unreachable: nothing was applied; try again later.", "ERROR", 60,
          {"code": ERROR_NUMBERS["UNAVAILABLE"],
           "message": "the database is unreachable; nothing was applied; try again later"})
    valid("error-unavailable-outcome-unknown", "ERROR UNAVAILABLE in place of the answer to a PATCH that was "
          "applied but whose commit failed: the outcome is unknown (the server may still commit it); a retry "
          "with the same idempotency key learns it.", "ERROR", 61,
          {"code": ERROR_NUMBERS["UNAVAILABLE"],
           "message": "the database failed before this request's commit was confirmed; it may still be applied: "
                      "retry with the same idempotency key to learn its outcome, or read the list"})
    # -- malformed ------------------------------------------------------------------
    def req(msg, body, request=80):
        return frame(REQUEST_TYPES[msg], 0, request, body)

    malformed("malformed-export-action", "EXPORT with action 3.", "request", req("EXPORT", u8(3)),
              "BAD_FIELD", "action", "EXPORT")
    malformed("malformed-export-count", "EXPORT START announcing 4 lists in 2 bytes (each takes at least 1).",
              "request", req("EXPORT", u8(0) + varint(0) + varint(4) + varint(2) + varint(5)),
              "BAD_FIELD", "count", "EXPORT")
    malformed("malformed-export-next-truncated", "EXPORT NEXT whose body ends before `sequence`.", "request",
              req("EXPORT", u8(1)), "BAD_FIELD", "sequence", "EXPORT")
    malformed("malformed-import-action", "IMPORT with action 4.", "request", req("IMPORT", u8(4), 90),
              "BAD_FIELD", "action", "IMPORT")
    malformed("malformed-import-mode", "IMPORT BEGIN with mode 2.", "request", req("IMPORT", u8(0) + u8(2), 90),
              "BAD_FIELD", "mode", "IMPORT")
    malformed("malformed-import-data-truncated", "IMPORT DATA announcing 100 data bytes and holding 3.",
              "request", req("IMPORT", u8(1) + varint(1) + varint(100) + b"\x1f\x8b\x08", 91),
              "BAD_FIELD", "data", "IMPORT")
    malformed("malformed-export-chunk-status", "EXPORT_CHUNK with status 3.", "response",
              frame(0xC0, 0, 81, varint(1) + u8(3) + varint(0) * 4 + varint(0)),
              "BAD_FIELD", "status", "EXPORT_CHUNK")
    malformed("malformed-import-ok-status", "IMPORT_OK with status 4.", "response",
              frame(0xC1, 0, 92, u8(4) + varint(0) * 5 + varint(0)), "BAD_FIELD", "status", "IMPORT_OK")
    malformed("malformed-import-ok-count", "IMPORT_OK announcing 5 pairs in 2 bytes (each takes at least 2).",
              "response", frame(0xC1, 0, 92, u8(2) + varint(0) * 5 + varint(5) + varint(2) + varint(14)),
              "BAD_FIELD", "count", "IMPORT_OK")


# ---------------------------------------------------------------------------
# The write-ahead log vector (Protocol/SNAPSHOT.md sections 6-7): its records
# are written by the Swift tests; here every one is encoded again from its
# meaning in wal.json, from that document alone, and must give the same bytes.
# ---------------------------------------------------------------------------

CHANGE_CODES = {"listCreated": 1, "listUpdated": 2, "listDeleted": 3, "patched": 4, "listImported": 5}
GROUP_MARKER = 0x06
LOG_OPS = {"insert": "INSERT", "setText": "SET_TEXT", "setChecked": "SET_CHECKED", "setDue": "SET_DUE",
           "setRemind": "SET_REMIND", "setPrice": "SET_PRICE", "delete": "DELETE", "move": "MOVE",
           "setKey": "SET_KEY"}


def enc_logged_op(op):
    """An **AppliedOp** from wal.json's spelling of it."""
    name = LOG_OPS[op["op"]]
    applied = {"op": name, "id": op["id"]}
    if name == "INSERT":
        applied.update(index=op["index"], text=op["text"], checked=op["checked"], remind=op["remind"])
        applied.update({k: op[k] for k in ("due", "price", "clientKey") if k in op})
    elif name == "SET_TEXT":
        applied["text"] = op["text"]
    elif name == "SET_CHECKED":
        applied["checked"] = op["checked"]
    elif name in ("SET_DUE", "SET_PRICE"):
        key = "due" if name == "SET_DUE" else "price"
        applied["present"] = key in op
        if key in op:
            applied[key] = op[key]
    elif name == "SET_REMIND":
        applied["remind"] = op["remind"]
    elif name == "MOVE":
        applied["toIndex"] = op["index"]
    elif name == "SET_KEY":         # no clientKey in wal.json: the key was cleared
        applied["present"] = "clientKey" in op
        if "clientKey" in op:
            applied["clientKey"] = op["clientKey"]
    return enc_applied_op(applied)


def enc_change(c, in_group=False):
    """A **Change** (section 7); as a **ChangeGroup** member (section 7.1),
    preceded by its presence byte."""
    kind = c["kind"]
    out = u8(1 if "client" in c else 0) if in_group else b""
    out += u8(CHANGE_CODES[kind]) + string(c["namespace"]) + varint(c["list"]) + varint(c["revision"])
    if kind in ("listCreated", "listUpdated"):
        out += string(c["name"]) + string(c["icon"])
    elif kind == "patched":
        out += varint(len(c["ops"])) + b"".join(enc_logged_op(op) for op in c["ops"])
    elif kind == "listImported":
        out += string(c["name"]) + string(c["icon"]) + varint(c["nextItemID"]) + varint(len(c["items"]))
        out += b"".join(varint(it["id"]) + enc_item_fields(it) for it in c["items"])
    if "client" in c:
        out += varint(c["client"]) + varint(c["sequence"])
    return out


def enc_log_content(changes):
    """One commit: its **Change**, or a **ChangeGroup** (section 7.1)."""
    if len(changes) == 1:
        return enc_change(changes[0])
    return u8(GROUP_MARKER) + varint(len(changes)) + b"".join(enc_change(c, in_group=True) for c in changes)


def check_wal():
    """Re-encodes wal.json's segment and compares it with the .log file."""
    folder = os.path.join(HERE, "snapshot")
    with open(os.path.join(folder, "wal.json"), encoding="utf-8") as f:
        vector = json.load(f)
    with open(os.path.join(folder, vector["file"]), "rb") as f:
        data = f.read()
    first_lsn = vector["records"][0]["lsn"]
    out = b"CKWL" + (1).to_bytes(2, "big") + (0).to_bytes(2, "big") + first_lsn.to_bytes(8, "big")
    assert out.hex() == vector["header"], "wal.json: segment header"
    for record in vector["records"]:
        assert record["offset"] == len(out), ("wal.json: offset", record["lsn"])
        payload = varint(record["lsn"]) + varint(record["lag"]) + enc_log_content(record["changes"])
        framed = u32be(len(payload)) + u32be(zlib.crc32(payload)) + payload
        assert framed.hex() == record["hex"], ("wal.json: record", record["lsn"])
        out += framed
    assert out == data, "wal.json: the records do not make up " + vector["file"]
    kinds = {c["kind"] for r in vector["records"] for c in r["changes"]}
    assert kinds == set(CHANGE_CODES), ("wal.json lacks change kinds", set(CHANGE_CODES) - kinds)
    assert any(len(r["changes"]) > 1 for r in vector["records"]), "wal.json lacks a ChangeGroup"
    return len(vector["records"])


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


# ---------------------------------------------------------------------------
# Protocol/WEBSOCKET.md: the web port's handshake and framing, as vectors in
# Protocol/vectors/websocket/ (one JSON file of cases each). Accept keys from
# hashlib and base64, frames built here: independent of the Swift codec.

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
WS_MASK = bytes.fromhex("37fa213d")
WS_HOST = "127.0.0.1:7480"


def ws_accept(key):
    import base64, hashlib
    return base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()


def ws_frame(opcode, payload, fin=True, mask=WS_MASK, rsv=0):
    n = len(payload)
    head = bytes([(0x80 if fin else 0) | rsv | opcode])
    bit = 0x80 if mask is not None else 0
    if n < 126:
        head += bytes([bit | n])
    elif n <= 0xFFFF:
        head += bytes([bit | 126]) + n.to_bytes(2, "big")
    else:
        head += bytes([bit | 127]) + n.to_bytes(8, "big")
    if mask is None:
        return head + payload
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def ws_request(fields, method="GET", target="/ws"):
    return "%s %s HTTP/1.1\r\n" % (method, target) + "".join("%s: %s\r\n" % kv for kv in fields) + "\r\n"


def ws_handshake_cases():
    key = "dGhlIHNhbXBsZSBub25jZQ=="   # RFC 6455 section 1.3's example key
    base = [("Host", WS_HOST), ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Key", key),
            ("Sec-WebSocket-Version", "13"), ("Sec-WebSocket-Protocol", "checklists.v1"),
            ("Origin", "http://" + WS_HOST)]

    def without(name):
        return [kv for kv in base if kv[0] != name]

    def replaced(name, value):
        return [(k, value if k == name else v) for k, v in base]

    accepted = ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Accept: %s\r\nSec-WebSocket-Protocol: checklists.v1\r\n\r\n" % ws_accept(key))
    cases = [
        ("accept-rfc-key", "A browser's upgrade from the page's own origin, with RFC 6455's example key "
         "(accept s3pPLMBiTxaQ9kYGzzhZRbK+xOo=).", ws_request(base), [], 101),
        ("accept-protocol-list", "Several subprotocols offered, checklists.v1 among them; header names in "
         "lower case, Connection with two tokens.",
         ws_request([(k.lower(), v) for k, v in replaced("Sec-WebSocket-Protocol", "chat, checklists.v1")
                     if k != "Connection"] + [("connection", "keep-alive, Upgrade")]), [], 101),
        ("accept-no-origin", "No Origin field: not a browser, allowed.", ws_request(without("Origin")), [], 101),
        ("accept-allowed-origin", "An Origin named by --web-allowed-origin.",
         ws_request(replaced("Origin", "https://app.example.com")), ["https://app.example.com"], 101),
        ("refuse-other-origin", "Another site's page, without --web-allowed-origin: 403.",
         ws_request(replaced("Origin", "http://evil.example")), [], 403),
        ("accept-own-origin-with-list", "With --web-allowed-origin, the page's own origin is still allowed.",
         ws_request(base), ["https://app.example.com"], 101),
        ("refuse-origin-not-listed", "With --web-allowed-origin, an origin neither listed nor the page's own: 403.",
         ws_request(replaced("Origin", "https://other.example.com")), ["https://app.example.com"], 403),
        ("refuse-origin-other-port", "The page's host on another port is another origin: 403.",
         ws_request(replaced("Origin", "http://127.0.0.1:8080")), [], 403),
        ("refuse-no-protocol", "No Sec-WebSocket-Protocol: 400.", ws_request(without("Sec-WebSocket-Protocol")), [], 400),
        ("refuse-other-protocol", "Only another subprotocol offered: 400.",
         ws_request(replaced("Sec-WebSocket-Protocol", "chat")), [], 400),
        ("refuse-no-key", "No Sec-WebSocket-Key: 400.", ws_request(without("Sec-WebSocket-Key")), [], 400),
        ("refuse-short-key", "A key that is not 16 bytes in base64: 400.",
         ws_request(replaced("Sec-WebSocket-Key", "c2hvcnQ=")), [], 400),
        ("refuse-version-8", "Sec-WebSocket-Version 8: 426 with Sec-WebSocket-Version: 13.",
         ws_request(replaced("Sec-WebSocket-Version", "8")), [], 426),
        ("refuse-no-upgrade", "No Upgrade field: 400.", ws_request(without("Upgrade")), [], 400),
        ("refuse-no-connection-upgrade", "Connection without the upgrade token: 400.",
         ws_request(replaced("Connection", "keep-alive")), [], 400),
        ("refuse-no-host", "No Host field: 400.", ws_request(without("Host")), [], 400),
        ("refuse-post", "POST /ws: 405.", ws_request(base, method="POST"), [], 405),
    ]
    out = []
    for name, description, request, origins, status in cases:
        case = {"name": name, "description": description, "request": request, "allowedOrigins": origins,
                "status": status}
        if status == 101:
            case["response"] = accepted if "dGhl" in request else None
            if case["response"] is None:
                raise SystemExit("handshake vector without the example key")
        out.append(case)
    return out


def ws_frame_cases():
    hello = bytes.fromhex("0000001b01000000000101010111636865636b6c6973742d636c692f312e30")
    stats = frame(0x40, 0, 2, b"")
    one = ws_frame(2, hello)
    cases = [
        ("hello-one-message", "A HELLO frame in one binary message, in one read.", [one], hello, [], None),
        ("hello-split-across-messages", "The same HELLO in two binary messages (5 bytes, then 26): the protocol "
         "frame spans WebSocket messages.", [ws_frame(2, hello[:5]) + ws_frame(2, hello[5:])], hello, [], None),
        ("hello-split-across-reads", "One message read in pieces of 1, 3 and the rest: the WebSocket header "
         "itself is split.", [one[:1], one[1:4], one[4:]], hello, [], None),
        ("two-frames-one-message", "HELLO and STATS in one binary message.", [ws_frame(2, hello + stats)],
         hello + stats, [], None),
        ("fragmented-with-ping", "A message in a binary frame without FIN, a ping between its fragments, "
         "and a continuation with FIN; the ping is answered, the payload joined.",
         [ws_frame(2, hello[:10], fin=False) + ws_frame(9, b"hi") + ws_frame(0, hello[10:])], hello,
         [{"op": "ping", "payload": "6869"}], None),
        ("length-16", "A 200-byte payload (16-bit length).", [ws_frame(2, bytes(range(200)))], bytes(range(200)),
         [], None),
        ("close-normal", "Close 1000 with reason \"bye\"; what follows it is ignored.",
         [ws_frame(8, b"\x03\xe8bye") + ws_frame(2, hello)], b"", [{"op": "close", "code": 1000, "reason": "bye"}],
         None),
        ("close-empty", "Close with no payload.", [ws_frame(8, b"")], b"", [{"op": "close", "code": None, "reason": ""}],
         None),
        ("pong", "An unsolicited pong: ignored (it counts as life).", [ws_frame(10, b"x")], b"",
         [{"op": "pong", "payload": "78"}], None),
        ("fail-unmasked", "A client frame without the mask bit: 1002.", [ws_frame(2, hello, mask=None)], b"", [],
         ("unmasked_frame", 1002)),
        ("fail-text", "A text frame: 1003.", [ws_frame(1, b"hello")], b"", [], ("text_frame", 1003)),
        ("fail-rsv1", "RSV1 set (no extension negotiated): 1002.", [ws_frame(2, hello, rsv=0x40)], b"", [],
         ("reserved_bits", 1002)),
        ("fail-reserved-opcode", "Opcode 0x3: 1002.", [ws_frame(3, b"")], b"", [], ("reserved_opcode", 1002)),
        ("fail-reserved-control-opcode", "Opcode 0xB: 1002.", [ws_frame(0xB, b"")], b"", [], ("reserved_opcode", 1002)),
        ("fail-fragmented-ping", "A ping without FIN: 1002.", [ws_frame(9, b"a", fin=False)], b"", [],
         ("fragmented_control", 1002)),
        ("fail-long-ping", "A ping of 126 bytes: 1002.", [ws_frame(9, bytes(126))], b"", [], ("oversized_control", 1002)),
        ("fail-stray-continuation", "A continuation with no message begun: 1002.", [ws_frame(0, b"x")], b"", [],
         ("bad_continuation", 1002)),
        ("fail-binary-inside-message", "A new binary frame while a fragmented message is unfinished: 1002; the "
         "connection is failed, and what it carried is not passed on.",
         [ws_frame(2, b"ab", fin=False) + ws_frame(2, b"cd")], b"", [], ("bad_continuation", 1002)),
        ("fail-close-one-byte", "A Close payload of 1 byte: 1002.", [ws_frame(8, b"\x03")], b"", [],
         ("bad_close_code", 1002)),
        ("fail-close-code-1005", "Close code 1005 (reserved for reporting, never sent): 1002.",
         [ws_frame(8, b"\x03\xed")], b"", [], ("bad_close_code", 1002)),
        ("fail-close-reason-not-utf8", "A close reason that is not UTF-8: 1007.", [ws_frame(8, b"\x03\xe8\xff")], b"",
         [], ("bad_close_reason", 1007)),
        ("fail-message-too-big", "With maxMessageBytes 1024, a frame announcing 2000 bytes: 1009 at its header.",
         [ws_frame(2, bytes(2000))[:8]], b"", [], ("message_too_big", 1009)),
        ("fail-fragments-too-big", "With maxMessageBytes 1024, fragments of 600 and 600 bytes: 1009 at the second header.",
         [ws_frame(2, bytes(600), fin=False) + ws_frame(0, bytes(600))], b"", [], ("message_too_big", 1009)),
    ]
    out = []
    for name, description, reads, stream, controls, failure in cases:
        case = {"name": name, "description": description, "reads": [r.hex() for r in reads], "stream": stream.hex(),
                "controls": controls, "maxMessageBytes": 1024 if "too-big" in name else 16 << 20}
        case["failure"] = None if failure is None else {"reason": failure[0], "closeCode": failure[1]}
        out.append(case)
    return out


def ws_server_frame_cases():
    cases = [("binary-empty", 2, b""), ("binary-125", 2, bytes(range(125))), ("binary-126", 2, bytes(range(126))),
             ("binary-300", 2, bytes(i & 0xFF for i in range(300))), ("close-1000", 8, b"\x03\xe8"),
             ("close-1002-reason", 8, b"\x03\xeaunmasked_frame"), ("ping", 9, b"checklists"), ("pong", 10, b"hi")]
    return [{"name": n, "opcode": op, "payload": p.hex(), "frame": ws_frame(op, p, mask=None).hex()} for n, op, p in cases]


def build_websocket_vectors():
    """{file name: text} of Protocol/vectors/websocket/."""
    files = {
        "handshake.json": {"description": "Upgrade requests to /ws and the status the web port answers (101 with "
                           "the exact response, or the refusal's status). allowedOrigins: --web-allowed-origin "
                           "(the page's own origin is always allowed).", "cases": ws_handshake_cases()},
        "client-frames.json": {"description": "Client bytes as read (reads), the protocol byte stream they carry "
                               "(stream), the control frames seen, and the failure with its close code (a failed "
                               "connection passes nothing on from the read the failure is in). Masks are 37fa213d.", "cases": ws_frame_cases()},
        "server-frames.json": {"description": "Frames the server sends: never masked, FIN set, the shortest "
                               "length encoding.", "cases": ws_server_frame_cases()},
    }
    return {name: render(value).encode() for name, value in files.items()}


def render(v):
    return json.dumps(v, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv):
    build()
    build_stats()
    build_sync()
    build_snapshots()
    names = [v["name"] for v in VECTORS]
    assert len(names) == len(set(names)), "duplicate vector names"
    for v in VECTORS:
        check(v)
    wal_records = check_wal()
    wanted = {v["name"] + ".json": render(v) for v in VECTORS}
    snapshot_dir = os.path.join(HERE, "snapshot")
    snapshot_files = build_snapshot_vectors()
    snapshot_files.update({"../websocket/" + f: data for f, data in build_websocket_vectors().items()})
    os.makedirs(os.path.join(HERE, "websocket"), exist_ok=True)
    snapshot_changed = sorted(f for f, data in snapshot_files.items()
                              if not os.path.exists(os.path.join(snapshot_dir, f)) or
                              open(os.path.join(snapshot_dir, f), "rb").read() != data)
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
        for f in snapshot_changed:
            print("out of date: snapshot/" + f)
        return 1 if stale or changed or snapshot_changed else 0
    for f in stale:
        os.remove(os.path.join(HERE, f))
    for f in changed:
        with open(os.path.join(HERE, f), "w", encoding="utf-8", newline="\n") as out:
            out.write(wanted[f])
    for f in snapshot_changed:
        with open(os.path.join(snapshot_dir, f), "wb") as out:
            out.write(snapshot_files[f])
    print("%d vectors (%d valid, %d malformed) and %d snapshot files; %d written, %d removed; %d log records checked" % (
        len(VECTORS), sum("error" not in v for v in VECTORS), sum("error" in v for v in VECTORS),
        len(snapshot_files), len(changed) + len(snapshot_changed), len(stale), wal_records))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
