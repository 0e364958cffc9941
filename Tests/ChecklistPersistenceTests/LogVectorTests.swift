import ChecklistModel
import ChecklistWire
import Foundation
import Testing
@testable import ChecklistPersistence

/// The golden log segment Protocol/vectors/snapshot/wal-0000000000000001.log
/// and its meaning in wal.json, checked both ways. Regenerate with
/// `CHECKLIST_WRITE_VECTORS=1 swift test --filter LogVectorTests`.
@Suite struct LogVectorTests {
    struct OpJSON: Codable, Equatable {
        var op: String
        var id: UInt64
        var index: UInt64?
        var text: String?
        var checked: Bool?
        var remind: Bool?
        var due: Int64?
        var price: Int64?

        init(_ op: AppliedOperation) {
            switch op {
            case let .insert(id, index, f):
                self.init(op: "insert", id: id.rawValue, index: index, text: f.text, checked: f.checked, remind: f.remind, due: f.due, price: f.price)
            case let .setText(id, text): self.init(op: "setText", id: id.rawValue, text: text)
            case let .setChecked(id, checked): self.init(op: "setChecked", id: id.rawValue, checked: checked)
            case let .setDue(id, due): self.init(op: "setDue", id: id.rawValue, due: due)
            case let .setRemind(id, remind): self.init(op: "setRemind", id: id.rawValue, remind: remind)
            case let .setPrice(id, price): self.init(op: "setPrice", id: id.rawValue, price: price)
            case let .delete(id): self.init(op: "delete", id: id.rawValue)
            case let .move(id, toIndex): self.init(op: "move", id: id.rawValue, index: toIndex)
            }
        }

        init(op: String, id: UInt64, index: UInt64? = nil, text: String? = nil, checked: Bool? = nil,
             remind: Bool? = nil, due: Int64? = nil, price: Int64? = nil) {
            self.op = op; self.id = id; self.index = index; self.text = text
            self.checked = checked; self.remind = remind; self.due = due; self.price = price
        }

        var operation: AppliedOperation {
            let id = ItemID(self.id)
            switch op {
            case "insert": return .insert(id: id, index: index!, fields: ItemFields(text: text!, checked: checked!, due: due, remind: remind!, price: price))
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

    struct RecordJSON: Codable, Equatable {
        var offset: Int
        var lsn: UInt64
        var lag: UInt64
        var namespace: String
        var list: UInt64
        var revision: UInt64
        var kind: String
        var name: String?
        var icon: String?
        var ops: [OpJSON]?
        /// The whole framed record: length, CRC-32, payload.
        var hex: String

        var change: Change {
            let kind: Change.Kind
            switch self.kind {
            case "listCreated": kind = .listCreated(name: name!, icon: icon!)
            case "listUpdated": kind = .listUpdated(name: name!, icon: icon!)
            case "listDeleted": kind = .listDeleted
            default: kind = .patched(ops!.map(\.operation))
            }
            return Change(namespace: Namespace(namespace), list: ListID(list), revision: revision, kind: kind)
        }
    }

    struct SegmentJSON: Codable {
        var description: String
        var file: String
        var header: String
        var records: [RecordJSON]
    }

    static let path = SnapshotVectorTests.directory + "/wal-0000000000000001.log"
    static let durableBefore: [LSN] = [0, 1, 1, 1, 3] // durable LSN when each record was appended

    @Test func segmentBothWays() throws {
        if SnapshotVectorTests.writing { try writeVectors() }
        let vector = try JSONDecoder().decode(SegmentJSON.self, from: Data(readFile(SnapshotVectorTests.directory + "/wal.json")))
        let bytes = readFile(Self.path)
        // Encode the meaning: the same bytes.
        var w = WireWriter()
        LogRecordFormat.writeSegmentHeader(firstLSN: 1, into: &w)
        #expect(SnapshotVectorTests.hex(w.bytes) == vector.header)
        for record in vector.records {
            #expect(w.count == record.offset)
            let start = w.count
            LogRecordFormat.appendRecord(lsn: record.lsn, durable: record.lsn - record.lag, change: record.change, into: &w)
            #expect(SnapshotVectorTests.hex(Array(w.bytes[start...])) == record.hex)
        }
        #expect(w.bytes == bytes)
        // Decode the file: the same changes.
        var decoded: [Change] = []
        let result = try bytes.withUnsafeBytes { raw in
            try LogSegmentScanner.scan(raw, file: Self.path, nameLSN: 1, isLast: true, skipThrough: 0) { _, change in decoded.append(change) }
        }
        #expect(decoded == vector.records.map(\.change))
        #expect(result.tornTail == nil)
        #expect(result.lastLSN == LSN(vector.records.count))
    }

    func writeVectors() throws {
        let changes = Array(everyKindOfChange.prefix(5))
        var w = WireWriter()
        LogRecordFormat.writeSegmentHeader(firstLSN: 1, into: &w)
        let header = SnapshotVectorTests.hex(w.bytes)
        var records: [RecordJSON] = []
        for (i, change) in changes.enumerated() {
            let lsn = LSN(i + 1)
            let start = w.count
            LogRecordFormat.appendRecord(lsn: lsn, durable: Self.durableBefore[i], change: change, into: &w)
            var r = RecordJSON(offset: start, lsn: lsn, lag: lsn - Self.durableBefore[i], namespace: change.namespace.rawValue,
                               list: change.list.rawValue, revision: change.revision, kind: "", hex: SnapshotVectorTests.hex(Array(w.bytes[start...])))
            switch change.kind {
            case let .listCreated(name, icon): r.kind = "listCreated"; r.name = name; r.icon = icon
            case let .listUpdated(name, icon): r.kind = "listUpdated"; r.name = name; r.icon = icon
            case .listDeleted: r.kind = "listDeleted"
            case let .patched(ops): r.kind = "patched"; r.ops = ops.map(OpJSON.init)
            case .listImported: r.kind = "listImported"
            }
            records.append(r)
        }
        writeFile(Self.path, w.bytes)
        let vector = SegmentJSON(description: "A log segment (Protocol/SNAPSHOT.md section 6) holding one record of every change kind and operation.",
                                 file: "wal-0000000000000001.log", header: header, records: records)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(vector).write(to: URL(fileURLWithPath: SnapshotVectorTests.directory + "/wal.json"))
    }
}
