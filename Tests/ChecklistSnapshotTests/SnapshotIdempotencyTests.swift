import ChecklistModel
@testable import ChecklistSnapshot
import ChecklistSnapshotFixtures
import ChecklistWire
import Foundation
import Testing

/// IDEMPOTENCY records (Protocol/SNAPSHOT.md section 3.8): written after the
/// lists, read back exactly, and bounded when hostile. (That recovery hands
/// them to its sink before the log is replayed: ChecklistPersistenceTests.)
@Suite(.timeLimit(.minutes(10))) struct SnapshotIdempotencyTests {
    func write(_ store: FakeStore, keys: [SnapshotIdempotency], options: SnapshotWriter.Options = .init()) throws -> ([UInt8], SnapshotWriter.Summary) {
        var out: [UInt8] = []
        let writer = try SnapshotWriter(header: SnapshotSamples.header(for: store), options: options) { (chunk) throws(SnapshotError) in
            out.append(contentsOf: chunk)
        }
        try store.write(to: writer)
        for client in keys { try writer.writeIdempotency(client) }
        let summary = try writer.finish(endLSN: 42)
        return (out, summary)
    }

    func records(in bytes: [UInt8]) throws -> [SnapshotRecord] {
        var offset = 0
        let reader = try SnapshotReader(name: "memory") { (buffer) throws(SnapshotError) -> Int in
            let n = min(buffer.count, bytes.count - offset)
            bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + n)])) }
            offset += n
            return n
        }
        var records: [SnapshotRecord] = []
        while let record = try reader.next() { records.append(record) }
        return records
    }

    /// Records of one client may be split; this joins consecutive ones.
    func joined(_ records: [SnapshotIdempotency]) -> [SnapshotIdempotency] {
        var out: [SnapshotIdempotency] = []
        for record in records {
            if let last = out.last, last.namespace == record.namespace, last.client == record.client {
                out[out.count - 1].answers += record.answers
            } else {
                out.append(record)
            }
        }
        return out
    }

    @Test(arguments: [SnapshotWriter.Options(), .init(level: 0, blockBytes: 512, compressionThreads: 1)])
    func recordsRoundTripThroughWriterAndReader(options: SnapshotWriter.Options) throws {
        let store = SnapshotSamples.store(items: 200)
        let (bytes, summary) = try write(store, keys: SnapshotSamples.clients, options: options)
        let records = try records(in: bytes)
        // The lists come first, whole; the records after them, as written.
        let firstKey = try #require(records.firstIndex { if case .idempotency = $0 { true } else { false } })
        #expect(records[..<firstKey].allSatisfy { if case .idempotency = $0 { false } else { true } })
        let keys = records[firstKey...].compactMap { if case .idempotency(let c) = $0 { c } else { nil } }
        #expect(keys == SnapshotSamples.clients)
        #expect(keys.count == records.count - firstKey)
        // They count towards the content's bytes and CRC, not its lists or items.
        #expect(summary.trailer.listCount == UInt64(store.lists.count))
        #expect(summary.trailer.itemCount == UInt64(store.itemCount))
        let (restored, _, trailer) = try SnapshotRoundTripTests().readFromMemory(bytes)
        #expect(restored.lists == store.lists)
        #expect(restored.keys == SnapshotSamples.clients)
        #expect(trailer == summary.trailer)
    }

    /// A client whose answers take more than `idempotencyRecordBytes` goes
    /// into several records in a row, each under the bound, each repeating
    /// the client and its floor; together they are the client's answers.
    @Test func aBigClientIsSplitIntoRecordsUnderTheBound() throws {
        let answers = (1...20_000).map { SnapshotSamples.answer(UInt64($0), list: 1_000_000, inserted: [ItemIDRun(first: ItemID(UInt64($0) * 1000), count: 300)]) }
        let big = SnapshotIdempotency(namespace: Namespace("big"), client: 99, floor: 5, answers: answers)
        let small = SnapshotIdempotency(namespace: Namespace("big"), client: 100, floor: 0, answers: [SnapshotSamples.answer(1)])
        let (bytes, _) = try write(FakeStore(), keys: [big, small])
        let keys = try records(in: bytes).compactMap { if case .idempotency(let c) = $0 { c } else { nil } }
        #expect(keys.count > 2)
        for record in keys.dropLast() {
            #expect(record.client == 99 && record.floor == 5 && !record.answers.isEmpty)
            var w = WireWriter()
            record.encode(into: &w)
            #expect(w.count <= SnapshotWriter.idempotencyRecordBytes)
        }
        #expect(joined(keys) == [big, small])
    }

    @Test func aRecordInsideAListsItemsIsRefusedByTheWriter() throws {
        let writer = try SnapshotWriter(header: SnapshotSamples.header(for: FakeStore())) { (_) throws(SnapshotError) in }
        try writer.writeList(SnapshotList(namespace: .default, id: ListID(1), name: "L", icon: "", revision: 1,
                                          nextItemID: ItemID(2), itemCount: 1))
        #expect(throws: SnapshotError.self) { try writer.writeIdempotency(SnapshotSamples.clients[0]) }
    }

    /// An older snapshot, without the record, loads as before: no keys.
    @Test func aSnapshotWithoutTheRecordRestoresNoKeys() throws {
        let (bytes, _) = try write(SnapshotSamples.store(items: 20), keys: [])
        let (restored, _, _) = try SnapshotRoundTripTests().readFromMemory(bytes)
        #expect(restored.keys.isEmpty)
        #expect(!restored.lists.isEmpty)
    }

    // MARK: hostile bodies

    /// A valid snapshot with one IDEMPOTENCY record of body `body`.
    func snapshot(withKeyRecord body: [UInt8]) -> (bytes: [UInt8], recordOffset: UInt64) {
        var raw = RawSnapshot()
        raw.header()
        raw.list(id: 1, items: 1)
        raw.item(id: 1)
        let offset = UInt64(raw.bytes.count)
        raw.record(SnapshotRecordType.idempotency.rawValue, body)
        raw.trailer(lists: 1, items: 1)
        return (raw.bytes, offset)
    }

    func body(_ build: (inout WireWriter) -> Void) -> [UInt8] {
        var w = WireWriter()
        w.writeString("ns")
        w.writeVarint(UInt64(1))  // client
        w.writeVarint(UInt64(0))  // floor
        build(&w)
        return w.bytes + [UInt8](repeating: 0, count: 16)
    }

    /// One answer (count 1, sequence 1, list 1, revision 2) with `runs` runs
    /// announced; the runs themselves follow.
    static func oneAnswer(runs: UInt64, _ w: inout WireWriter) {
        for v in [1, 1, 1, 2, runs] as [UInt64] { w.writeVarint(v) }
    }

    static let hostile: [(String, @Sendable (inout WireWriter) -> Void)] = [
        ("count: 2^40 answers in a few bytes", { w in w.writeVarint(UInt64(1) << 40) }),
        ("count: 2^64-1 answers", { w in w.writeVarint(UInt64.max) }),
        ("runs: 2^30 runs in a few bytes", { w in oneAnswer(runs: 1 << 30, &w) }),
        ("length: one run of 2^32 ids", { w in
            oneAnswer(runs: 1, &w); w.writeVarint(UInt64(1)); w.writeVarint(UInt64(1) << 32)
        }),
        ("length: two runs adding up past 2^32-1 (and past 2^64)", { w in
            oneAnswer(runs: 2, &w)
            w.writeVarint(UInt64(1)); w.writeVarint(UInt64(UInt32.max))
            w.writeVarint(UInt64(1) << 40); w.writeVarint(UInt64.max)
        }),
        ("length: a run past the largest id", { w in
            oneAnswer(runs: 1, &w); w.writeVarint(UInt64.max); w.writeVarint(UInt64(2))
        }),
        ("first: item id 0", { w in
            oneAnswer(runs: 1, &w); w.writeVarint(UInt64(0)); w.writeVarint(UInt64(1))
        }),
        ("length: a run of 0 ids", { w in
            oneAnswer(runs: 1, &w); w.writeVarint(UInt64(5)); w.writeVarint(UInt64(0))
        }),
        ("list: list id 0", { w in for v in [1, 1, 0, 2, 0] as [UInt64] { w.writeVarint(v) } }),
        ("revision: revision 0", { w in for v in [1, 1, 3, 0, 0] as [UInt64] { w.writeVarint(v) } }),
    ]

    /// Hostile counts are refused before anything is allocated for them:
    /// CORRUPT_SNAPSHOT at the record's offset, naming the field.
    @Test(arguments: 0..<hostile.count)
    func hostileBodiesAreCorruptSnapshots(_ index: Int) throws {
        let (name, build) = Self.hostile[index]
        let field = String(name.prefix { $0 != ":" })
        let (bytes, offset) = snapshot(withKeyRecord: body(build))
        let error = #expect(throws: SnapshotError.self, "\(name)") { _ = try records(in: try gzip(bytes)) }
        #expect(error?.code == .corruptSnapshot, "\(name)")
        #expect(error?.offset == offset, "\(name)")
        #expect(error?.description.contains(field) == true, "\(name): \(String(describing: error))")
    }

    /// A record that only just fits its counts decodes.
    @Test func countsThatFitTheBodyDecode() throws {
        let (bytes, _) = snapshot(withKeyRecord: body { w in
            Self.oneAnswer(runs: 2, &w)
            w.writeVarint(UInt64(1)); w.writeVarint(UInt64(UInt32.max) - 1)
            w.writeVarint(UInt64(1) << 40); w.writeVarint(UInt64(1))
        })
        let keys = try records(in: try gzip(bytes)).compactMap { if case .idempotency(let c) = $0 { c } else { nil } }
        #expect(keys.first?.answers.first?.inserted.map(\.count) == [UInt64(UInt32.max) - 1, 1])
    }
}
