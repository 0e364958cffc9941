import ChecklistModel
import ChecklistSnapshot
import ChecklistSnapshotFixtures
import ChecklistWire
import Testing
@testable import ChecklistPersistence

@Suite(.timeLimit(.minutes(10))) struct ChangeRecordTests {
    func encode(_ change: Change) -> [UInt8] {
        var w = WireWriter()
        change.encode(into: &w)
        return w.bytes
    }

    /// Decodes `bytes` as one change, which must use them all.
    func decodeWhole(_ bytes: [UInt8]) throws -> Change {
        try WireReader.decode(bytes) { r throws(ChecklistError) in
            let c = try Change.decode(from: &r)
            #expect(r.remaining == 0)
            return c
        }
    }

    @Test(arguments: everyKindOfChange)
    func roundTrip(_ change: Change) throws {
        let bytes = encode(change)
        let decoded = try decodeWhole(bytes)
        #expect(decoded == change)
    }

    /// Kinds and fields added after the first version: an import that set a
    /// whole list, and a PATCH's idempotency key (an optional trailing field).
    static let laterChanges: [Change] = [
        Change(namespace: .default, list: ListID(7), revision: 12, kind: .listImported(ImportedList(
            name: "Imported", icon: "Inbox", nextItemID: ItemID(40),
            items: ImportedItems([Item(id: ItemID(39), fields: ItemFields(text: "Last", checked: true, due: -5, remind: true, price: 100)),
                                  Item(id: ItemID(2), fields: ItemFields(text: ""))])))),
        Change(namespace: .default, list: ListID(7), revision: 13, kind: .listImported(ImportedList(
            name: "Emptied", icon: "", nextItemID: ItemID(40), items: ImportedItems([])))),
        Change(namespace: .default, list: ListID(7), revision: 14, kind: .patched([.setChecked(ItemID(2), true)]),
               idempotencyKey: IdempotencyKey(client: UInt64.max, sequence: 0)),
    ]

    @Test(arguments: laterChanges)
    func laterKindsRoundTrip(_ change: Change) throws {
        let bytes = encode(change)
        let decoded = try decodeWhole(bytes)
        #expect(decoded == change)
        #expect(decoded.idempotencyKey == change.idempotencyKey)
        // A cut encoding never decodes to the same change, and never traps.
        for cut in 0..<bytes.count {
            let partial = try? WireReader.decode(Array(bytes[..<cut])) { r throws(ChecklistError) in try Change.decode(from: &r) }
            #expect(partial != change)
        }
    }

    @Test func literalBytes() {
        // kind 1, "default", list 1, revision 1, "Inbox", "No Icon"
        let change = Change(namespace: .default, list: ListID(1), revision: 1, kind: .listCreated(name: "Inbox", icon: "No Icon"))
        #expect(encode(change) == [0x01, 0x07] + Array("default".utf8) + [0x01, 0x01, 0x05] + Array("Inbox".utf8) + [0x07] + Array("No Icon".utf8))
        // kind 4, "", list 2, revision 3, 2 ops: SET_CHECKED item 5 true, MOVE item 6 to 0
        let patch = Change(namespace: Namespace(""), list: ListID(2), revision: 3, kind: .patched([.setChecked(ItemID(5), true), .move(ItemID(6), toIndex: 0)]))
        #expect(encode(patch) == [0x04, 0x00, 0x02, 0x03, 0x02, 0x03, 0x05, 0x01, 0x09, 0x06, 0x00])
    }

    /// Every proper prefix of every encoding is an error, never a trap.
    @Test(arguments: everyKindOfChange)
    func truncatedInputThrows(_ change: Change) {
        let bytes = encode(change)
        for cut in 0..<bytes.count {
            #expect(throws: ChecklistError.self) {
                try WireReader.decode(Array(bytes[..<cut])) { r throws(ChecklistError) in try Change.decode(from: &r) }
            }
        }
    }

    @Test(arguments: [
        [0x09, 0x00, 0x01, 0x01],              // unknown kind
        [0x04, 0x00, 0x01, 0x01, 0x01, 0x04, 0x01], // TOGGLE is never stored
        [0x04, 0x00, 0x01, 0x01, 0x01, 0x0B, 0x01], // unknown opcode
        [0x04, 0x00, 0x01, 0x01, 0xFF, 0xFF, 0xFF, 0x7F], // op count larger than the input
        [0x04, 0x00, 0x01, 0x01, 0x01, 0x03, 0x01, 0x02], // bool 2
    ] as [[UInt8]])
    func invalidInputThrows(_ bytes: [UInt8]) {
        #expect(throws: ChecklistError.self) {
            try WireReader.decode(bytes) { r throws(ChecklistError) in try Change.decode(from: &r) }
        }
    }

    @Test func logRecordFraming() throws {
        var w = WireWriter()
        let change = everyKindOfChange[0]
        LogRecordFormat.appendRecord(lsn: 300, durable: 298, changes: [change], into: &w)
        let payload = Array(w.bytes[8...])
        #expect(Array(w.bytes[0..<4]) == [0, 0, 0, UInt8(payload.count)])
        let crc = CRC32.checksum(payload)
        #expect(Array(w.bytes[4..<8]) == [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)])
        // lsn 300 = varint AC 02, lag 2
        #expect(Array(payload[0..<3]) == [0xAC, 0x02, 0x02])
        #expect(Array(payload[3...]) == encode(change))
    }

    @Test func segmentNames() {
        #expect(LogRecordFormat.segmentName(firstLSN: 0x1A) == "wal-000000000000001a.log")
        #expect(LogRecordFormat.firstLSN(ofSegmentName: "wal-000000000000001a.log") == 0x1A)
        #expect(LogRecordFormat.firstLSN(ofSegmentName: "wal-000000000000001A.log") == nil)
        #expect(LogRecordFormat.firstLSN(ofSegmentName: "wal-1a.log") == nil)
        #expect(LogRecordFormat.firstLSN(ofSegmentName: "wal-000000000000001a.log.tmp") == nil)
    }
}
