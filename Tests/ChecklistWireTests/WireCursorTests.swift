import ChecklistModel
import ChecklistRandom
import ChecklistWire
import Testing

/// The direct writes into reserved memory (`WireCursor`, `WireSize`) against
/// the field-by-field `WireWriter` encodings they replace on the PAGE path.
@Suite(.timeLimit(.minutes(1))) struct WireCursorTests {
    /// Values around every varint length boundary, and the extremes.
    static let edgeValues: [UInt64] = [0, 1, 0x7F, 0x80, 0x3FFF, 0x4000, 0x1F_FFFF, 0x20_0000, UInt64(UInt32.max),
                                       1 << 56, (1 << 63) - 1, 1 << 63, .max]

    @Test func sizesAreTheWriterEncodingsLengths() {
        for v in Self.edgeValues {
            var w = WireWriter()
            w.writeVarint(v)
            #expect(WireSize.varint(v) == w.count, "varint \(v)")
            let signed = Int64(bitPattern: v)
            var z = WireWriter()
            z.writeZigZag(signed)
            #expect(WireSize.zigZag(signed) == z.count, "zigzag \(signed)")
        }
        #expect(WireSize.bytes(0) == 1 && WireSize.bytes(128) == 130)
    }

    @Test func cursorWritesTheWriterBytes() {
        for v in Self.edgeValues {
            let text: [UInt8] = Array("row \(v)".utf8)
            var expected = WireWriter()
            expected.writeVarint(v)
            expected.writeZigZag(Int64(bitPattern: v))
            expected.writeU8(UInt8(truncatingIfNeeded: v))
            text.withUnsafeBytes { expected.writeBytes($0) }
            var actual = WireWriter()
            actual.writeU8(9)  // something before: the reserved bytes are appended
            let count = WireSize.varint(v) + WireSize.zigZag(Int64(bitPattern: v)) + 1 + WireSize.bytes(text.count)
            actual.writeReserved(count: count) { c in
                c.writeVarint(v)
                c.writeZigZag(Int64(bitPattern: v))
                c.writeU8(UInt8(truncatingIfNeeded: v))
                text.withUnsafeBytes { c.writeBytes($0) }
                #expect(c.remaining == 0)
            }
            #expect(actual.bytes == [9] + expected.bytes)
        }
    }

    /// Random rows (every flag combination, ids, dues and prices of every
    /// length, texts of 0 ... 300 bytes) and headers: `writeRow` and
    /// `PageHeader.write` produce exactly the bytes of `PageMessage.encode`
    /// (for the row, a one-row PAGE after its header) and `PageHeader.encode`,
    /// and `encodedBytes` the header's length.
    @Test func pageRowsAndHeadersMatchTheReferenceEncoder() throws {
        var rng = SplitMix64(seed: 14)
        func value() -> UInt64 {
            let v = rng.next()
            return Self.edgeValues[Int(v % UInt64(Self.edgeValues.count))] &+ (v >> 60 == 0 ? 0 : v % 3)
        }
        for round in 0..<500 {
            let header = PageHeader(list: ListID(value()), revision: value(), total: value(), offset: value(),
                                    count: Int(rng.next() % 200))
            var reference = WireWriter()
            header.encode(into: &reference)
            var direct = WireWriter()
            direct.writeReserved(count: header.encodedBytes) { header.write(into: &$0) }
            #expect(direct.bytes == reference.bytes, "header of round \(round)")

            let id = ItemID(value())
            let flags = rng.next()
            let due: Int64? = flags & 4 != 0 ? Int64(bitPattern: value()) : nil
            let price: Int64? = flags & 8 != 0 ? Int64(bitPattern: value()) : nil
            let text = [UInt8]((0..<Int(rng.next() % 300)).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
            let string = String(decoding: text.map { 0x20 + $0 % 0x5F }, as: UTF8.self)  // PageMessage rows hold a String
            let item = Item(id: id, fields: ItemFields(text: string, checked: flags & 1 != 0, due: due, remind: flags & 2 != 0,
                                                       price: price))
            let page = PageMessage(list: ListID(1), revision: 1, total: 1, offset: 0, rows: [item])
            var pageReference = WireWriter()
            page.encode(into: &pageReference)
            var rowDirect = WireWriter()
            page.header.encode(into: &rowDirect)
            Array(string.utf8).withUnsafeBytes { bytes in
                rowDirect.writeReserved(atMost: PageMessage.maxRowBytesBesidesText + bytes.count) { c in
                    PageMessage.writeRow(id: id, checked: flags & 1 != 0, remind: flags & 2 != 0, due: due, price: price,
                                         text: bytes, into: &c)
                }
            }
            #expect(rowDirect.bytes == pageReference.bytes, "row of round \(round)")
        }
    }

    /// A frame's header, now written through a cursor, is still the one the
    /// parser reads back.
    @Test func framesStillParse() {
        var encoder = FrameEncoder()
        var w = WireWriter()
        encoder.append(Ping(data: [1, 2, 3]), requestID: 0xA1B2_C3D4, to: &w)
        #expect(Array(w.bytes.prefix(10)) == [0, 0, 0, UInt8(w.count - 4), MessageType.ping.rawValue, 0, 0xA1, 0xB2, 0xC3, 0xD4])
        w.bytes.withUnsafeBytes { raw in
            guard case let .frame(header, _, size) = FrameParser.next(in: raw, maxFrameBytes: .max) else {
                Issue.record("no frame")
                return
            }
            #expect(header.requestID == 0xA1B2_C3D4 && header.type == .ping && size == w.count)
        }
    }
}
