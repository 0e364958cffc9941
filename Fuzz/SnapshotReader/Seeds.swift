import ChecklistModel
import CZlib
#if canImport(Glibc)
import ChecklistSnapshot
import Glibc
#endif

// The seed corpus of the SnapshotReader target: a few snapshots made by the
// real SnapshotWriter, each twice, in the harness's two modes (first byte
// 0x00: the file as is; 0x01: its uncompressed content). Written by the
// harness binary itself when SNAPSHOT_FUZZ_WRITE_SEEDS names a directory
// (see LLVMFuzzerInitialize in main.swift), so no second, uninstrumented
// build of the modules is needed.

func snapshot(lists: [(SnapshotList, [Item])]) throws -> [UInt8] {
    var file: [UInt8] = []
    let header = SnapshotHeader(createdAt: 1_714_554_000, source: "snapshot-seeds", listCount: UInt64(lists.count),
                                itemCount: UInt64(lists.reduce(0) { $0 + $1.1.count }), startLSN: 42,
                                nextListID: ListID(UInt64(lists.count) + 1))
    let writer = try SnapshotWriter(header: header) { (chunk) throws(SnapshotError) in file.append(contentsOf: chunk) }
    for (list, items) in lists {
        try writer.writeList(list)
        for item in items { try writer.writeItem(item) }
    }
    _ = try writer.finish(endLSN: 42)
    return file
}

func gunzip(_ input: [UInt8]) -> [UInt8] {
    var stream = z_stream()
    guard czlib_inflateInit2(&stream, 15 + 32) == Z_OK else { return [] }
    defer { inflateEnd(&stream) }
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    input.withUnsafeBytes { raw in
        stream.next_in = UnsafeMutablePointer(mutating: raw.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(raw.count)
        var status = Z_OK
        while status == Z_OK {
            chunk.withUnsafeMutableBytes { c in
                stream.next_out = c.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.avail_out = uInt(c.count)
                status = inflate(&stream, Z_NO_FLUSH)
                out.append(contentsOf: c.prefix(c.count - Int(stream.avail_out)))
                stream.next_out = nil
            }
        }
        stream.next_in = nil
    }
    return out
}

func write(_ bytes: [UInt8], _ path: String) {
    guard let f = fopen(path, "wb") else { fatalError("cannot write \(path)") }
    _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, f) }
    fclose(f)
}

func list(_ id: UInt64, _ ns: String, _ items: [Item]) -> (SnapshotList, [Item]) {
    (SnapshotList(namespace: Namespace(ns), id: ListID(id), name: "List \(id) ☕", icon: "Groceries", revision: 7,
                  nextItemID: ItemID(UInt64(items.count) + 1), itemCount: UInt64(items.count)), items)
}

let rich = [
    Item(id: ItemID(1), fields: ItemFields(text: "Milk")),
    Item(id: ItemID(2), fields: ItemFields(text: "Dentist", checked: true, due: 1_714_554_000, remind: true)),
    Item(id: ItemID(3), fields: ItemFields(text: "Coupon", due: -14_182_940, price: -250)),
]
let seeds: [(String, [(SnapshotList, [Item])])] = [
    ("empty", []),
    ("two-lists", [list(1, "default", rich), list(2, "alice", [])]),
    ("many-items", [list(1, "bob", (1...200).map { Item(id: ItemID(UInt64($0)), fields: ItemFields(text: "row \($0)", checked: $0 % 2 == 0)) })]),
]
/// Writes the seeds into `directory`.
func writeSeeds(to directory: String) throws {
    for (name, lists) in seeds {
        let file = try snapshot(lists: lists)
        write([0x00] + file, directory + "/snapshot-\(name)-gzip")
        write([0x01] + gunzip(file), directory + "/snapshot-\(name)-raw")
    }
}
