@testable import ChecklistServer
import ChecklistModel
import ChecklistStore
import ChecklistWire
import Testing

/// `PageEncoder`, the server's one-pass PAGE encoding straight from the
/// store's leaves, against `PageMessage.encode` of the same rows as `Item`s
/// (the reference the golden vectors check).
@Suite(.timeLimit(.minutes(5))) struct PageEncoderTests {
    /// A list spanning several leaves (128 rows each), with every field:
    /// checked, remind with a due date, prices, keys, empty and long texts.
    static func filledStore() throws -> (Store, ListID) {
        let store = Store()
        let ns = Namespace.default
        let list = try store.createList(in: ns, name: "Rows", icon: "").id
        for batch in 0..<5 {
            let ops = (0..<100).map { j in
                let i = batch * 100 + j
                return PatchOperation.insert(tempRef: nil, position: .end, fields: ItemFields(
                    text: i % 17 == 0 ? "" : "row \(i) " + String(repeating: "é", count: i % 50),
                    checked: i % 3 == 0, due: i % 4 == 0 ? Int64(i) * 86_400 - 1_000_000 : nil, remind: i % 8 == 0,
                    price: i % 5 == 0 ? Int64(i) * 199 - 5000 : nil, clientKey: i % 7 == 0 ? "key-\(i)" : nil))
            }
            _ = try store.patch(in: ns, list: list, baseRevision: nil, ops: ops)
        }
        return (store, list)
    }

    /// The reference: the rows that fit as `RowsFitting` counts them, encoded as a `PageMessage`.
    static func reference(_ page: StorePage, revision: Revision, withKeys: Bool, maxFrameBytes: UInt32) -> [UInt8] {
        var items = page.items
        if !withKeys { for i in items.indices { items[i].fields.clientKey = nil } }
        var fitting = PageMessage.RowsFitting(maxFrameBytes: maxFrameBytes)
        for item in items {
            fitting.admit(textBytes: item.text.utf8.count + (withKeys ? PageMessage.maxKeyBytes : 0))
        }
        let message = PageMessage(list: page.summary.id, revision: revision, total: page.total, offset: page.offset,
                                  rows: Array(items.prefix(fitting.count)))
        var w = WireWriter()
        message.encode(into: &w)
        return w.bytes
    }

    @Test(arguments: [UInt32(4 << 20), 3000, 700])
    func encodesWhatPageMessageEncodes(maxFrameBytes: UInt32) throws {
        let (store, list) = try Self.filledStore()
        let ns = Namespace.default
        for filter in RowFilter.allCases {
            for (offset, limit) in [(0, 100), (120, 20), (250, 300), (490, 100), (600, 10), (0, 1)] {
                let rows = try store.pageRows(in: ns, list: list, start: .offset(UInt64(offset)), limit: limit, filter: filter)
                let page = try store.page(in: ns, list: list, start: .offset(UInt64(offset)), limit: limit, filter: filter)
                for withKeys in [false, true] {
                    var w = WireWriter()
                    PageEncoder.write(rows, withKeys: withKeys, maxFrameBytes: maxFrameBytes, into: &w)
                    let expected = Self.reference(page, revision: rows.header.revision, withKeys: withKeys,
                                                  maxFrameBytes: maxFrameBytes)
                    #expect(w.bytes == expected, "filter \(filter) offset \(offset) limit \(limit) keys \(withKeys)")
                    #expect(w.count <= FrameHeader.maxBodyBytes(maxFrameBytes: maxFrameBytes))
                }
            }
        }
    }

    /// A page of a list without keys takes the column path even for a
    /// client that announced CLIENT_KEYS, and writes no key.
    @Test func aListWithoutKeysHasNoKeyBits() throws {
        let store = Store()
        let list = try store.createList(in: .default, name: "Plain", icon: "").id
        _ = try store.patch(in: .default, list: list, baseRevision: nil, ops: (0..<3).map {
            .insert(tempRef: nil, position: .end, fields: ItemFields(text: "item \($0)"))
        })
        let rows = try store.pageRows(in: .default, list: list, start: .offset(0), limit: 10, filter: .all)
        var w = WireWriter()
        PageEncoder.write(rows, withKeys: true, maxFrameBytes: 4 << 20, into: &w)
        let decoded = try w.bytes.withUnsafeBytes { raw in
            var reader = WireReader(raw)
            return try PageMessage.decode(from: &reader)
        }
        #expect(decoded.rows.map(\.text) == ["item 0", "item 1", "item 2"])
        #expect(decoded.rows.allSatisfy { $0.fields.clientKey == nil })
    }
}
