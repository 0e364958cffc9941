import ChecklistModel
import ChecklistWire
import Testing

/// Every encoder and decoder of PAGE rows against every golden vector of
/// PAGE, both ways: `PageRow.read` (the one reading of the row layout, used
/// by `PageMessage.decode` and by the client's `PageBytes` and paging
/// cursor) decodes the vector's rows to its meaning, and the row encoders
/// (`PageMessage.encode`, `writeRow` into
/// reserved memory) write the vector's bytes from its meaning. The vector
/// `page-client-keys` is among them (a keyed row beside an unkeyed one).
@Suite("PAGE rows against the golden vectors")
struct PageRowVectorTests {
    static let pageVectors: [String] = GoldenVectors.names.filter { (try? GoldenVectors.load($0))?.message == "PAGE" }

    @Test func theKeyedVectorIsAmongThem() {
        #expect(Self.pageVectors.contains("page-client-keys"))
        #expect(Self.pageVectors.contains("malformed-page-truncated-row"))
        #expect(Self.pageVectors.count >= 6)
    }

    /// The rows of a PAGE body read by `PageRow.read`, after the header.
    static func readRows(_ body: [UInt8]) throws(ChecklistError) -> (PageHeader, [Item], remaining: Int) {
        try WireReader.decode(body) { (r) throws(ChecklistError) in
            let header = try PageHeader.decode(from: &r)
            var items: [Item] = []
            for _ in 0..<header.count { items.append(try PageRow.read(from: &r).item()) }
            return (header, items, r.remaining)
        }
    }

    @Test(arguments: pageVectors)
    func rowsBothWays(_ name: String) throws {
        let v = try GoldenVectors.load(name)
        let frame = try #require(v.frame)
        #expect(frame.flags == 0, "PAGE vectors are plain frames")
        let body = Array(v.bytes.dropFirst(FrameHeader.size))

        if let expected = v.error {
            // The malformed vector: the row reading fails on the documented field.
            #expect {
                _ = try Self.readRows(body)
            } throws: { error in
                let e = error as? ChecklistError
                return e?.code.rawValue == expected.code && e?.field == expected.field
            }
            return
        }
        guard case .server(.page(let page)) = try DecodedMessage.from(v) else {
            Issue.record("\(name) does not mean a PAGE")
            return
        }

        // decode(bytes) == meaning, by the shared row reading.
        let (header, items, remaining) = try Self.readRows(body)
        #expect(header == page.header)
        #expect(items == page.rows)
        #expect(remaining == 0)
        // The borrowed view holds what the Items hold, keys included.
        try body.withUnsafeBytes { raw in
            var r = WireReader(raw)
            _ = try PageHeader.decode(from: &r)
            for item in page.rows {
                let row = try PageRow.read(from: &r)
                #expect(row.id == item.id && row.text == item.text && row.clientKey == item.fields.clientKey)
                #expect(row.checked == item.checked && row.due == item.fields.due && row.price == item.fields.price)
                #expect(row.flags.contains(.hasKey) == (item.fields.clientKey != nil))
            }
        }

        // encode(meaning) == bytes, by every row encoder.
        var message = WireWriter()
        page.encode(into: &message)
        #expect(message.bytes == body, "PageMessage.encode")

        // The server's row encoder, into memory reserved by the worst case per row (as `PageEncoder` does).
        var reserved = WireWriter()
        let bound = page.header.encodedBytes + page.rows.reduce(0) { sum, row in
            sum + PageMessage.maxRowBytesBesidesText + PageMessage.maxKeyBytes + row.text.utf8.count
        }
        reserved.writeReserved(atMost: bound) { c in
            page.header.write(into: &c)
            for row in page.rows {
                var text = row.text
                text.withUTF8 { text in
                    PageMessage.writeRow(id: row.id, checked: row.checked, remind: row.fields.remind, due: row.fields.due,
                                         price: row.fields.price, clientKey: row.fields.clientKey, text: UnsafeRawBufferPointer(text),
                                         into: &c)
                }
            }
        }
        #expect(reserved.bytes == body, "PageMessage.writeRow")
    }
}
