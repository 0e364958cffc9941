import ChecklistModel
@testable import ChecklistSnapshot
import ChecklistSnapshotFixtures
import ChecklistWire
import Foundation
import Testing

/// Rows built on the inflating threads (`SnapshotRowBuilding`): a sink
/// gets exactly the lists and rows, in the same order, that reading the
/// file row by row on one thread gives, wherever the members are cut, and
/// a damaged snapshot gives the same error.
@Suite(.timeLimit(.minutes(1))) struct ParallelDecodeTests {
    /// Builds `Item`s (the test's stand-in for the store's leaves).
    struct ItemBuilder: SnapshotRowBuilder {
        var items: [Item] = []
        mutating func append(_ row: ImportedItems.View) -> Bool {
            items.append(Item(id: row.id, fields: ItemFields(text: String(decoding: row.text, as: UTF8.self), checked: row.checked,
                                                              due: row.due, remind: row.remind, price: row.price)))
            return true
        }
        mutating func take() -> [Item] {
            defer { items = [] }
            return items
        }
    }

    /// Records what it is given, in order; counts the rows that came built.
    final class RecordingSink: SnapshotRestoreSink {
        enum Event: Equatable {
            case list(SnapshotList)
            case item(Item, ListID)
            case keys(SnapshotIdempotency)
        }
        var events: [Event] = []
        var builtRows = 0
        let building: Bool
        init(building: Bool) { self.building = building }
        func restoreHeader(_ header: SnapshotHeader) throws {}
        func restoreList(_ list: SnapshotList) throws { events.append(.list(list)) }
        func restoreItem(_ item: Item, in list: ListID) throws { events.append(.item(item, list)) }
        func restoreIdempotency(_ client: SnapshotIdempotency) throws { events.append(.keys(client)) }
        var rowBuilding: SnapshotRowBuilding? { building ? SnapshotRowBuilding { ItemBuilder() } : nil }
        func restoreRows(_ rows: any Sendable, in list: ListID) throws {
            let items = try #require(rows as? [Item])
            builtRows += items.count
            events += items.map { .item($0, list) }
        }
    }

    /// Lists of 0, 1, 2, 3 and many items, ids not all in runs.
    static func content(listSizes: [Int] = [0, 1, 5000, 2, 0, 3, 700, 1, 12_000], keys: Bool = true) -> [UInt8] {
        var lists: [(SnapshotList, [Item])] = []
        for (n, size) in listSizes.enumerated() {
            let items = (0..<size).map { i in
                Item(id: ItemID(UInt64(i < size / 2 ? i + 1 : i * 2 + 7)),
                     fields: ItemFields(text: i % 97 == 0 ? "Ünïcödé \(i) ✓" : "Item \(i) of list \(n)", checked: i % 3 == 0,
                                        due: i % 11 == 0 ? Int64(i) * -3 : nil, remind: i % 5 == 0, price: i % 13 == 0 ? Int64(i) : nil))
            }
            lists.append((SnapshotList(namespace: n % 2 == 0 ? .default : Namespace("other"), id: ListID(UInt64(n * 3 + 1)),
                                       name: "List \(n)", icon: "", revision: 9, nextItemID: ItemID(UInt64(size * 2 + 10)),
                                       itemCount: UInt64(size)), items))
        }
        var w = WireWriter(capacity: 1 << 20)
        w.bytes += SnapshotFormat.magic
        w.writeU8(UInt8(SnapshotFormat.version >> 8))
        w.writeU8(UInt8(SnapshotFormat.version & 0xFF))
        func record(_ type: SnapshotRecordType, _ body: (inout WireWriter) -> Void) {
            var b = WireWriter()
            body(&b)
            w.writeU8(type.rawValue)
            w.writeVarint(b.count)
            w.bytes += b.bytes
        }
        let itemCount = lists.reduce(0) { $0 + $1.1.count }
        record(.header) {
            SnapshotHeader(createdAt: 1, source: "tests", listCount: UInt64(lists.count), itemCount: UInt64(itemCount),
                           startLSN: 0, nextListID: ListID(100)).encode(into: &$0)
        }
        for (list, items) in lists {
            record(.list) { list.encode(into: &$0) }
            for item in items { record(.item) { item.encodeSnapshotRecord(into: &$0) } }
        }
        if keys { for client in SnapshotSamples.clients { record(.idempotency) { client.encode(into: &$0) } } }
        let crc = w.bytes.withUnsafeBytes { CRC32.update(0, $0) }
        let contentBytes = w.count
        record(.trailer) {
            SnapshotTrailer(listCount: UInt64(lists.count), itemCount: UInt64(itemCount), endLSN: 0,
                            contentBytes: UInt64(contentBytes), crc32: crc).encode(into: &$0)
        }
        return w.bytes
    }

    /// Offsets where records start (after the preamble).
    static func recordStarts(_ content: [UInt8]) -> [Int] {
        var starts: [Int] = []
        var at = SnapshotFormat.preambleBytes
        while at < content.count {
            starts.append(at)
            var r = content.withUnsafeBytes { WireReader(UnsafeRawBufferPointer(rebasing: $0[(at + 1)...])) }
            let length = try! r.readVarint("length")
            at += 1 + r.index + Int(length)
        }
        return starts
    }

    /// `content` as one gzip member per piece between `cuts`.
    static func members(_ content: [UInt8], cuts: [Int]) throws -> [UInt8] {
        var out: [UInt8] = []
        let bounds = [0] + cuts.filter { $0 > 0 && $0 < content.count }.sorted() + [content.count]
        for (from, to) in zip(bounds, bounds.dropFirst()) where to > from {
            let deflater = try GzipDeflater(level: 1)
            try content.withUnsafeBytes { raw in
                try deflater.compress(UnsafeRawBufferPointer(rebasing: raw[from..<to]), finish: true) { out += $0 }
            }
        }
        return out
    }

    /// What `sink` got from `path`, or the error's code.
    static func read(_ path: String, threads: Int, building: Bool) -> Result<RecordingSink, SnapshotError> {
        let sink = RecordingSink(building: building)
        do {
            let reader = try SnapshotReader(path: path, inflateThreads: threads, rowBuilding: sink.rowBuilding)
            _ = try reader.readAll(into: sink)
            return .success(sink)
        } catch let error as SnapshotError {
            return .failure(error)
        } catch {
            return .failure(SnapshotError(.misuse, "\(error)"))
        }
    }

    /// Cuts at record starts (every `every`-th), plus `extra` cuts anywhere.
    static func cuts(_ content: [UInt8], every: Int, extra: [Int] = []) -> [Int] {
        let starts = recordStarts(content)
        return stride(from: 0, to: starts.count, by: every).map { starts[$0] } + extra
    }

    @Test("rows built on the workers equal rows read one by one", arguments: [1, 7, 50, 400])
    func sameRows(_ every: Int) throws {
        let directory = TempDirectory("parallel-decode")
        defer { directory.remove() }
        let content = Self.content()
        let path = directory.file("cut.ckss.gz")
        writeFile(path, try Self.members(content, cuts: Self.cuts(content, every: every)))
        let serial = try Self.read(path, threads: 1, building: false).get()
        let built = try Self.read(path, threads: 3, building: true).get()
        #expect(built.events == serial.events)
        #expect(serial.events.count > 17_000)
        #expect(built.builtRows > serial.events.count / 2)
    }

    @Test("members cut inside records: those stretches are read row by row, the same rows come out")
    func straddlingRecords() throws {
        let directory = TempDirectory("parallel-decode")
        defer { directory.remove() }
        let content = Self.content()
        let path = directory.file("straddle.ckss.gz")
        // Every 3000 bytes (inside records mostly), and between whole records too.
        let anywhere = Array(stride(from: 1000, to: content.count, by: 3000))
        writeFile(path, try Self.members(content, cuts: Self.cuts(content, every: 30, extra: anywhere)))
        let serial = try Self.read(path, threads: 1, building: false).get()
        let built = try Self.read(path, threads: 2, building: true).get()
        #expect(built.events == serial.events)
        #expect(built.builtRows > 0)
        #expect(built.builtRows < serial.events.count)
    }

    @Test("only tiny and empty lists")
    func tinyLists() throws {
        let directory = TempDirectory("parallel-decode")
        defer { directory.remove() }
        let content = Self.content(listSizes: Array(repeating: [0, 1, 2, 0, 3], count: 200).flatMap { $0 }, keys: false)
        let path = directory.file("tiny.ckss.gz")
        writeFile(path, try Self.members(content, cuts: Self.cuts(content, every: 3)))
        let serial = try Self.read(path, threads: 1, building: false).get()
        let built = try Self.read(path, threads: 3, building: true).get()
        #expect(built.events == serial.events)
        #expect(built.builtRows > 0)
    }

    @Test("a snapshot written by SnapshotWriter takes its stretches built")
    func writerOutput() throws {
        let directory = TempDirectory("parallel-decode")
        defer { directory.remove() }
        let path = try ParallelInflateTests.write(directory)
        let serial = try Self.read(path, threads: 1, building: false).get()
        let built = try Self.read(path, threads: 2, building: true).get()
        #expect(built.events == serial.events)
        #expect(built.builtRows > 5000)
    }

    @Test("damage in a member gives the error reading one stream gives", arguments: [0.2, 0.5, 0.8])
    func damagedMember(_ at: Double) throws {
        let directory = TempDirectory("parallel-decode")
        defer { directory.remove() }
        let content = Self.content()
        let bytes = try Self.members(content, cuts: Self.cuts(content, every: 50))
        // Three bytes in the middle of a member's deflate data (a gzip
        // header's MTIME, XFL and OS bytes are not checked by anyone).
        var flipped = bytes
        let starts = bytes.withUnsafeBytes { ParallelGzipInflater.memberStarts(in: $0) }
        let member = Int(Double(starts.count - 1) * at)
        for k in 0..<3 { flipped[(starts[member] + starts[member + 1]) / 2 + k] ^= 0x55 }
        let cut = Array(bytes.prefix(Int(Double(bytes.count) * at)))
        // A changed text byte inside the content: every member inflates,
        // the workers decode it, the trailer's CRC-32 finds it.
        var changed = content
        let item = Self.recordStarts(content)[Int(Double(Self.recordStarts(content).count) * at)]
        changed[item + 8] ^= 0x01
        let rewritten = try Self.members(changed, cuts: Self.cuts(changed, every: 50))
        for (name, damaged) in [("flipped", flipped), ("cut", cut), ("changed", rewritten)] {
            let path = directory.file("\(name).ckss.gz")
            writeFile(path, damaged)
            guard case .failure(let serial) = Self.read(path, threads: 1, building: false) else {
                Issue.record("\(name) read without error")
                continue
            }
            guard case .failure(let built) = Self.read(path, threads: 3, building: true) else {
                Issue.record("\(name) read without error with rows built")
                continue
            }
            #expect(built.code == serial.code, "\(name)")
        }
    }

    /// A list announcing one item more (or less) than follow: the workers
    /// decode such stretches fine, the reading thread refuses them and
    /// reports the damage where one stream reports it.
    @Test("wrong item counts give CORRUPT_SNAPSHOT at the same offset", arguments: [1, -1])
    func wrongCounts(_ delta: Int) throws {
        let directory = TempDirectory("parallel-decode")
        defer { directory.remove() }
        var sizes = [0, 1, 5000, 2, 0, 3, 700, 1, 12_000]
        let content = Self.content(listSizes: sizes)
        // The same content, but list 2's LIST record says 5000 + delta.
        sizes[2] += delta
        let other = Self.content(listSizes: sizes)
        let starts = Self.recordStarts(content)
        let otherStarts = Self.recordStarts(other)
        // Records 0 header, 1 list 0, 2 list 1, 3 its item, 4 list 2.
        let damaged = Array(content[..<starts[4]]) + Array(other[otherStarts[4]..<otherStarts[5]]) + Array(content[starts[5]...])
        let path = directory.file("counts.ckss.gz")
        writeFile(path, try Self.members(damaged, cuts: Self.cuts(damaged, every: 40)))
        guard case .failure(let serial) = Self.read(path, threads: 1, building: false) else {
            Issue.record("read without error")
            return
        }
        guard case .failure(let built) = Self.read(path, threads: 3, building: true) else {
            Issue.record("read without error with rows built")
            return
        }
        #expect(serial.code == .corruptSnapshot)
        #expect(built.code == serial.code)
        #expect(built.offset == serial.offset)
    }
}
