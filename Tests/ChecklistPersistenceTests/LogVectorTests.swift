import ChecklistModel
import ChecklistSnapshot
import ChecklistSnapshotFixtures
import ChecklistWire
import Foundation
import Testing
@testable import ChecklistPersistence

/// The golden log segment Protocol/vectors/snapshot/wal-0000000000000001.log
/// and its meaning in wal.json, checked both ways. Regenerate with
/// `CHECKLIST_WRITE_VECTORS=1 swift test --filter LogVectorTests`.
@Suite(.timeLimit(.minutes(10))) struct LogVectorTests {
    struct OpJSON: Codable, Equatable {
        var op: String
        var id: UInt64
        var index: UInt64?
        var text: String?
        var checked: Bool?
        var remind: Bool?
        var due: Int64?
        var price: Int64?
        var clientKey: String?

        init(_ op: AppliedOperation) {
            switch op {
            case let .insert(id, index, f):
                self.init(op: "insert", id: id.rawValue, index: index, text: f.text, checked: f.checked, remind: f.remind, due: f.due, price: f.price,
                          clientKey: f.clientKey)
            case let .setText(id, text): self.init(op: "setText", id: id.rawValue, text: text)
            case let .setChecked(id, checked): self.init(op: "setChecked", id: id.rawValue, checked: checked)
            case let .setDue(id, due): self.init(op: "setDue", id: id.rawValue, due: due)
            case let .setRemind(id, remind): self.init(op: "setRemind", id: id.rawValue, remind: remind)
            case let .setPrice(id, price): self.init(op: "setPrice", id: id.rawValue, price: price)
            case let .setKey(id, key): self.init(op: "setKey", id: id.rawValue, clientKey: key)
            case let .delete(id): self.init(op: "delete", id: id.rawValue)
            case let .move(id, toIndex): self.init(op: "move", id: id.rawValue, index: toIndex)
            }
        }

        init(op: String, id: UInt64, index: UInt64? = nil, text: String? = nil, checked: Bool? = nil,
             remind: Bool? = nil, due: Int64? = nil, price: Int64? = nil, clientKey: String? = nil) {
            self.op = op; self.id = id; self.index = index; self.text = text
            self.checked = checked; self.remind = remind; self.due = due; self.price = price; self.clientKey = clientKey
        }

        var operation: AppliedOperation {
            let id = ItemID(self.id)
            switch op {
            case "insert":
                return .insert(id: id, index: index!, fields: ItemFields(text: text!, checked: checked!, due: due, remind: remind!,
                                                                         price: price, clientKey: clientKey))
            case "setKey": return .setKey(id, clientKey)
            case "setText": return .setText(id, text!)
            case "setChecked": return .setChecked(id, checked!)
            case "setDue": return .setDue(id, due)
            case "setRemind": return .setRemind(id, remind!)
            case "setPrice": return .setPrice(id, price)
            case "delete": return .delete(id)
            default: return .move(id, toIndex: index!)
            }
        }
    }

    struct ItemJSON: Codable, Equatable {
        var id: UInt64
        var text: String
        var checked: Bool
        var remind: Bool
        var due: Int64?
        var price: Int64?
        var clientKey: String?

        init(_ item: Item) {
            let f = item.fields
            id = item.id.rawValue; text = f.text; checked = f.checked; remind = f.remind; due = f.due; price = f.price
            clientKey = f.clientKey
        }

        var item: Item {
            Item(id: ItemID(id), fields: ItemFields(text: text, checked: checked, due: due, remind: remind, price: price,
                                                    clientKey: clientKey))
        }
    }

    /// One **Change** (SNAPSHOT.md section 7) by meaning.
    struct ChangeJSON: Codable, Equatable {
        var namespace: String
        var list: UInt64
        var revision: UInt64
        var kind: String
        var name: String?
        var icon: String?
        var ops: [OpJSON]?
        var nextItemID: UInt64?
        var items: [ItemJSON]?
        /// The idempotency key, when the change carries one.
        var client: UInt64?
        var sequence: UInt64?

        init(_ change: Change) {
            namespace = change.namespace.rawValue; list = change.list.rawValue; revision = change.revision
            client = change.idempotencyKey?.client; sequence = change.idempotencyKey?.sequence
            switch change.kind {
            case let .listCreated(name, icon): kind = "listCreated"; self.name = name; self.icon = icon
            case let .listUpdated(name, icon): kind = "listUpdated"; self.name = name; self.icon = icon
            case .listDeleted: kind = "listDeleted"
            case let .patched(ops): kind = "patched"; self.ops = ops.map(OpJSON.init)
            case let .listImported(list):
                kind = "listImported"; name = list.name; icon = list.icon
                nextItemID = list.nextItemID.rawValue; items = list.items.array.map(ItemJSON.init)
            }
        }

        var change: Change {
            let kind: Change.Kind
            switch self.kind {
            case "listCreated": kind = .listCreated(name: name!, icon: icon!)
            case "listUpdated": kind = .listUpdated(name: name!, icon: icon!)
            case "listDeleted": kind = .listDeleted
            case "listImported":
                kind = .listImported(ImportedList(name: name!, icon: icon!, nextItemID: ItemID(nextItemID!),
                                                  items: ImportedItems(items!.map(\.item))))
            default: kind = .patched(ops!.map(\.operation))
            }
            let key = client.map { IdempotencyKey(client: $0, sequence: sequence!) }
            return Change(namespace: Namespace(namespace), list: ListID(list), revision: revision, kind: kind, idempotencyKey: key)
        }
    }

    /// One framed record: a single change, or the group of one commit.
    struct RecordJSON: Codable, Equatable {
        var offset: Int
        var lsn: UInt64
        var lag: UInt64
        /// The record's changes: one, or (a **ChangeGroup**) several.
        var changes: [ChangeJSON]
        /// The whole framed record: length, CRC-32, payload.
        var hex: String
    }

    struct SegmentJSON: Codable {
        var description: String
        var file: String
        var header: String
        var records: [RecordJSON]
    }

    /// The records of the vector, one commit each: every change kind and
    /// operation, a keyed patch, and an import of two lists replacing one.
    static let commits: [[Change]] = {
        let keyed = Change(namespace: .default, list: ListID(2), revision: 2,
                           kind: .patched([.setChecked(ItemID(1), true),
                                           // Client keys (SPEC.md 6.8): the log keeps them across restarts.
                                           .insert(id: ItemID(2), index: 1, fields: ItemFields(text: "Milk", clientKey: "uuid-2")),
                                           .setKey(ItemID(1), "0C5A3E1B-9F2D-4E7A-8B61-3D2F5A7C9E10"),
                                           .setKey(ItemID(2), nil)]),
                           idempotencyKey: IdempotencyKey(client: 0x1234_5678, sequence: 300))
        let imported = ImportedList(name: "Hardware", icon: "Tools", nextItemID: ItemID(5), items: ImportedItems([
            Item(id: ItemID(1), fields: ItemFields(text: "Nails", checked: true)),
            Item(id: ItemID(4), fields: ItemFields(text: "Glue", due: 1_714_554_000, remind: true, price: 399, clientKey: "glue")),
        ]))
        let empty = ImportedList(name: "Empty", icon: "", nextItemID: ItemID(1), items: ImportedItems([]))
        return everyKindOfChange.prefix(5).map { [$0] } + [
            [keyed],
            [Change(namespace: .default, list: ListID(3), revision: 7, kind: .listImported(imported))],
            [Change(namespace: .default, list: ListID(2), revision: 3, kind: .listDeleted),
             Change(namespace: .default, list: ListID(3), revision: 8, kind: .listImported(imported)),
             Change(namespace: .default, list: ListID(9), revision: 1, kind: .listImported(empty))],
            // No commit of the server makes this group, but the format
            // allows it: a member with an idempotency key (presence bit 0).
            [Change(namespace: .default, list: ListID(9), revision: 2, kind: .listUpdated(name: "F", icon: "")),
             Change(namespace: .default, list: ListID(9), revision: 3, kind: .patched([.delete(ItemID(1))]),
                    idempotencyKey: IdempotencyKey(client: 1, sequence: 2))],
        ]
    }()

    static let path = VectorFiles.directory + "/wal-0000000000000001.log"
    static let durableBefore: [LSN] = [0, 1, 1, 1, 3, 5, 5, 6, 8] // durable LSN when each record was appended

    @Test func segmentBothWays() throws {
        if VectorFiles.writing { try writeVectors() }
        let vector = try JSONDecoder().decode(SegmentJSON.self, from: Data(readFile(VectorFiles.directory + "/wal.json")))
        let bytes = readFile(Self.path)
        // Encode the meaning: the same bytes.
        var w = WireWriter()
        LogRecordFormat.writeSegmentHeader(firstLSN: 1, into: &w)
        #expect(VectorFiles.hex(w.bytes) == vector.header)
        for record in vector.records {
            #expect(w.count == record.offset)
            let start = w.count
            LogRecordFormat.appendRecord(lsn: record.lsn, durable: record.lsn - record.lag,
                                         changes: record.changes.map(\.change), into: &w)
            #expect(VectorFiles.hex(Array(w.bytes[start...])) == record.hex)
            if let only = record.changes.first, record.changes.count == 1 {
                // A batch's record, its change read in place from the batch's array: the same bytes.
                var one = WireWriter()
                let batch = [vector.records[0].changes[0].change, only.change]
                LogRecordFormat.appendRecord(lsn: record.lsn, durable: record.lsn - record.lag, of: batch, at: 1, into: &one)
                #expect(VectorFiles.hex(one.bytes) == record.hex)
            }
        }
        #expect(w.bytes == bytes)
        // Decode the file: the same changes, a group's sharing its LSN.
        var decoded: [(LSN, Change)] = []
        let result = try bytes.withUnsafeBytes { raw in
            try LogSegmentScanner.scan(raw, file: Self.path, nameLSN: 1, isLast: true, skipThrough: 0) { decoded.append(($0, $1)) }
        }
        let expected = vector.records.flatMap { record in record.changes.map { (record.lsn, $0.change) } }
        #expect(decoded.map(\.0) == expected.map(\.0))
        #expect(decoded.map(\.1) == expected.map(\.1))
        #expect(result.tornTail == nil)
        #expect(result.lastLSN == LSN(vector.records.count))
        // The vector covers what it claims to.
        let kinds = Set(expected.map { ChangeJSON($0.1).kind })
        #expect(kinds == ["listCreated", "listUpdated", "listDeleted", "patched", "listImported"])
        #expect(vector.records.contains { $0.changes.count > 1 })
        #expect(expected.contains { $0.1.idempotencyKey != nil })
    }

    /// A log written by the `WriteAheadLog` itself (imports encoded on its
    /// flusher thread, the rest at append) has the vector's bytes.
    @Test func writeAheadLogWritesTheVectorsBytes() throws {
        let dir = TempDirectory("wal-vector")
        defer { dir.remove() }
        let log = try WriteAheadLog(directory: dir.path, nextLSN: 1, options: .init(policy: .no))
        for commit in Self.commits { try log.append(commit) }
        try log.close()
        let written = readFile(LogSegments.path(in: dir.path, firstLSN: 1))
        let vector = readFile(Self.path)
        // Lags differ (this log fsyncs only at close): compare the framing
        // by decoding both.
        #expect(written.count == vector.count)
        var fromLog: [Change] = []
        var fromVector: [Change] = []
        _ = try written.withUnsafeBytes { raw in
            try LogSegmentScanner.scan(raw, file: "written", nameLSN: 1, isLast: true, skipThrough: 0) { fromLog.append($1) }
        }
        _ = try vector.withUnsafeBytes { raw in
            try LogSegmentScanner.scan(raw, file: Self.path, nameLSN: 1, isLast: true, skipThrough: 0) { fromVector.append($1) }
        }
        #expect(fromLog == fromVector)
        #expect(fromLog == Self.commits.flatMap { $0 })
    }

    /// A record streamed in pieces (as the flusher writes imports) has the
    /// bytes of the one encoded whole, and comes in more than one piece.
    @Test func aStreamedRecordHasTheBytesOfTheWholeOne() throws {
        let items = (1...4_000).map { Item(id: ItemID(UInt64($0)), fields: ItemFields(text: "item number \($0) of the list", checked: $0 % 2 == 0)) }
        let imported = ImportedList(name: "Big", icon: "", nextItemID: ItemID(4_001), items: ImportedItems(items))
        for commit in [[Change(namespace: .default, list: ListID(4), revision: 9, kind: .listImported(imported))],
                       [Change(namespace: .default, list: ListID(3), revision: 2, kind: .listDeleted),
                        Change(namespace: .default, list: ListID(4), revision: 9, kind: .listImported(imported))]] {
            var whole = WireWriter()
            LogRecordFormat.appendRecord(lsn: 77, durable: 70, changes: commit, into: &whole)
            var streamed: [UInt8] = []
            var pieces = 0
            var scratch = WireWriter()
            LogRecordFormat.streamRecord(lsn: 77, durable: 70, changes: commit, scratch: &scratch, pieceBytes: 16 << 10) { piece in
                streamed.append(contentsOf: piece)
                pieces += 1
            }
            #expect(whole.count > 4 * (16 << 10))
            #expect(pieces > 4)
            #expect(streamed == whole.bytes)
        }
    }

    func writeVectors() throws {
        var w = WireWriter()
        LogRecordFormat.writeSegmentHeader(firstLSN: 1, into: &w)
        let header = VectorFiles.hex(w.bytes)
        var records: [RecordJSON] = []
        for (i, commit) in Self.commits.enumerated() {
            let lsn = LSN(i + 1)
            let start = w.count
            LogRecordFormat.appendRecord(lsn: lsn, durable: Self.durableBefore[i], changes: commit, into: &w)
            records.append(RecordJSON(offset: start, lsn: lsn, lag: lsn - Self.durableBefore[i], changes: commit.map(ChangeJSON.init),
                                      hex: VectorFiles.hex(Array(w.bytes[start...]))))
        }
        writeFile(Self.path, w.bytes)
        let vector = SegmentJSON(description: "A log segment (Protocol/SNAPSHOT.md section 6) holding one record of every change kind "
                                     + "and operation, a patch with its idempotency key, an imported list, and the group of one "
                                     + "import (a deletion and two imported lists in one record), and a group with a keyed member.",
                                 file: "wal-0000000000000001.log", header: header, records: records)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(vector).write(to: URL(fileURLWithPath: VectorFiles.directory + "/wal.json"))
    }
}
