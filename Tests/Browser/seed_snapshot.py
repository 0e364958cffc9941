"""Writes a snapshot file (Protocol/SNAPSHOT.md) holding one list of N items,
for seeding a server fast with `checklist import FILE` (the browser tests
and benchmarks need a list of a million rows). Item i (0-based) has text
"Item i" and is checked when i % 3 == 0. Uses the record encoders of
Protocol/vectors/generate.py, which are written from SNAPSHOT.md."""
import gzip
import os
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Protocol", "vectors"))
import generate as g  # noqa: E402


def item_text(i):
    return "Item %d" % i


def write(path, items, name="A million rows"):
    parts = [b"CKSS\r\n\x1a\n\x00\x01"]
    parts.append(g.snapshot_record(0x01, g.zigzag(1767225600) + g.string("browser tests") + g.varint(1) +
                                   g.varint(items) + g.varint(0) + g.varint(2)))
    parts.append(g.snapshot_record(0x02, g.string("default") + g.varint(1) + g.string(name) + g.string("Folder") +
                                   g.varint(1) + g.varint(items + 1) + g.varint(items)))
    record = g.snapshot_record
    for i in range(items):
        text = item_text(i).encode()
        body = g.varint(i + 1) + bytes([1 if i % 3 == 0 else 0]) + g.varint(len(text)) + text
        parts.append(record(0x03, body))
    content = b"".join(parts)
    trailer = g.varint(1) + g.varint(items) + g.varint(0) + g.varint(len(content)) + zlib.crc32(content).to_bytes(4, "big")
    content += g.snapshot_record(0x04, trailer)
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(content)


if __name__ == "__main__":
    write(sys.argv[1], int(sys.argv[2]))
