import ChecklistModel
import ChecklistWire
import Testing

/// SPEC.md section 3: the primitive body encodings.
@Suite("Body encoding", .timeLimit(.minutes(10)))
struct BodyEncodingTests {
    static let varintCases: [(UInt64, [UInt8])] = [
        (0, [0x00]),
        (1, [0x01]),
        (127, [0x7F]),
        (128, [0x80, 0x01]),
        (300, [0xAC, 0x02]),
        (16383, [0xFF, 0x7F]),
        (16384, [0x80, 0x80, 0x01]),
        (UInt64(UInt32.max), [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]),
        (1 << 63, [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]),
        (UInt64.max, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]),
    ]

    @Test(arguments: varintCases)
    func varint(_ value: UInt64, _ bytes: [UInt8]) throws {
        var w = WireWriter()
        w.writeVarint(value)
        #expect(w.bytes == bytes)
        #expect(try read(bytes) { try $0.readVarint("v") } == value)
    }

    @Test func varintRoundTripsAtEveryGroupBoundary() throws {
        for shift in 0..<64 {
            for value in [UInt64(1) << shift, (UInt64(1) << shift) &- 1, (UInt64(1) << shift) + 1] {
                var w = WireWriter()
                w.writeVarint(value)
                #expect(w.bytes.count == max(1, (64 - value.leadingZeroBitCount + 6) / 7))
                #expect(try read(w.bytes) { try $0.readVarint("v") } == value)
            }
        }
    }

    @Test func longerVarintFormsAreAccepted() throws {
        // 0 and 1 written in 10 bytes; 5 in 2 bytes.
        #expect(try read([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]) { try $0.readVarint("v") } == 0)
        #expect(try read([0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]) { try $0.readVarint("v") } == 1)
        #expect(try read([0x85, 0x00]) { try $0.readVarint("v") } == 5)
        // The reader stops after the varint: the rest is left unread.
        let (value, remaining) = try read([0x80, 0x01, 0xAA, 0xBB]) { r in (try r.readVarint("v"), r.remaining) }
        #expect(value == 128 && remaining == 2)
    }

    static let badVarints: [[UInt8]] = [
        [UInt8](repeating: 0x80, count: 10) + [0x01],         // 11 bytes
        [UInt8](repeating: 0xFF, count: 10) + [0x00],         // 11 bytes
        [UInt8](repeating: 0xFF, count: 9) + [0x02],          // 10th byte > 1: 65 bits
        [UInt8](repeating: 0x80, count: 9) + [0x7F],          // 10th byte > 1
        [UInt8](repeating: 0x80, count: 9) + [0x81, 0x00],    // 10th byte has the continuation bit
        [0x80],                                               // truncated
        [0xFF, 0xFF],                                         // truncated
        [],                                                   // empty
    ]

    @Test(arguments: badVarints)
    func badVarintsAreBadField(_ bytes: [UInt8]) {
        #expect(readError(bytes) { try $0.readVarint("limit") } == ChecklistError.Code.badField)
        #expect(readErrorField(bytes) { try $0.readVarint("limit") } == "limit")
    }

    static let zigzagCases: [(Int64, UInt64)] = [
        (0, 0), (-1, 1), (1, 2), (-2, 3), (2, 4), (63, 126), (-64, 127), (64, 128),
        (Int64.max, UInt64.max - 1), (Int64.min, UInt64.max), (Int64.min + 1, UInt64.max - 2),
        (1_714_554_000, 3_429_108_000), (-250, 499),
    ]

    @Test(arguments: zigzagCases)
    func zigzag(_ value: Int64, _ mapped: UInt64) throws {
        var z = WireWriter()
        z.writeZigZag(value)
        var v = WireWriter()
        v.writeVarint(mapped)
        #expect(z.bytes == v.bytes)
        #expect(try read(z.bytes) { try $0.readZigZag("due") } == value)
    }

    @Test func bool() throws {
        #expect(try read([0]) { try $0.readBool("checked") } == false)
        #expect(try read([1]) { try $0.readBool("checked") } == true)
        for b: UInt8 in [2, 0x7F, 0x80, 0xFF] {
            #expect(readErrorField([b]) { try $0.readBool("checked") } == "checked")
        }
        #expect(readErrorField([]) { try $0.readBool("checked") } == "checked")
    }

    @Test func strings() throws {
        var w = WireWriter()
        w.writeString("Café ☕")
        #expect(w.bytes == [9] + Array("Café ☕".utf8))
        #expect(try read(w.bytes) { try $0.readString("name") } == "Café ☕")
        #expect(try read([0]) { try $0.readString("name") } == "")
        let invalid: [[UInt8]] = [
            [1, 0xFF], [2, 0xC0, 0xAF], [3, 0xED, 0xA0, 0x80], [1, 0x80], [2, 0xE2, 0x98],
            [4, 0xF4, 0x90, 0x80, 0x80],
        ]
        for bytes in invalid {
            #expect(readErrorField(bytes) { try $0.readString("name") } == "name", "\(bytes)")
        }
        // Length running past the end of the body.
        #expect(readErrorField([5, 0x61, 0x62]) { try $0.readString("icon") } == "icon")
        #expect(readErrorField([0xFF, 0xFF, 0xFF, 0xFF, 0x0F]) { try $0.readBytes("data") } == "data")
    }

    @Test func presence() throws {
        #expect(try read([0b11]) { try $0.readPresence(known: 0b11) } == 0b11)
        #expect(readErrorField([0b100]) { try $0.readPresence(known: 0b11) } == "presence")
        #expect(readErrorField([0x80]) { try $0.readPresence(known: 0b1) } == "presence")
    }

    @Test func itemRef() throws {
        var w = WireWriter()
        ItemRef.id(ItemID(5)).encode(into: &w)
        ItemRef.temp(1).encode(into: &w)
        ItemRef.id(ItemID(64)).encode(into: &w)
        #expect(w.bytes == [0x0A, 0x03, 0x80, 0x01])
        let refs = try read(w.bytes) { r in
            [try ItemRef.decode(from: &r), try ItemRef.decode(from: &r), try ItemRef.decode(from: &r)]
        }
        #expect(refs == [.id(ItemID(5)), .temp(1), .id(ItemID(64))])
    }

    @Test func itemFieldFlags() throws {
        let f = ItemFields(text: "x", checked: true, due: -1, remind: true, price: 1)
        #expect(f.encodedBytes() == [0x0F, 1, 0x78, 1, 2])
        #expect(try read([0x0F, 1, 0x78, 1, 2]) { try ItemFields.decode(from: &$0) } == f)
        for flags: UInt8 in [0x20, 0x40, 0x80] {
            #expect(readErrorField([flags, 0]) { try ItemFields.decode(from: &$0) } == "flags")
        }
        // Bit 4: a client key follows the price (SPEC.md section 6); here it is missing.
        #expect(readErrorField([0x10, 0]) { try ItemFields.decode(from: &$0) } == "clientKey")
        let keyed = ItemFields(text: "x", price: 1, clientKey: "k")
        #expect(keyed.encodedBytes() == [0x18, 1, 0x78, 2, 1, 0x6B])
        #expect(try read([0x18, 1, 0x78, 2, 1, 0x6B]) { try ItemFields.decode(from: &$0) } == keyed)
        // Flag bit 2 says a due date follows; it is missing.
        #expect(readErrorField([0x04, 0]) { try ItemFields.decode(from: &$0) } == "due")
        #expect(readErrorField([0x08, 0]) { try ItemFields.decode(from: &$0) } == "price")
    }

    /// A count larger than the rest of the body can hold is refused before
    /// anything is allocated for it (SPEC.md section 3, counts).
    @Test func hostileCountsAreRefused() {
        func field<M: WireMessage>(_: M.Type, _ body: [UInt8]) -> String? {
            do {
                _ = try M.decode(body: body)
                return nil
            } catch {
                return error.field
            }
        }
        let huge: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]
        #expect(field(Lists.self, huge) == "count")
        #expect(field(Lists.self, [2] + [1, 0, 0, 0, 0, 0]) == "count")          // 6 bytes: room for one
        #expect(field(PageMessage.self, [1, 1, 0, 0] + huge) == "count")
        #expect(field(PatchOK.self, [1, 1] + huge) == "count")
        #expect(field(Patch.self, [1, 0] + huge) == "ops")
        #expect(field(Patch.self, [1, 0, 2, 0x04, 0x0A]) == "ops")               // 2 bytes: room for one
        #expect(field(Patch.self, [1, 0, 1, 0x04, 0x80]) == "ref")               // room, but truncated
    }

    // MARK: - helpers

    private func read<T>(_ bytes: [UInt8], _ body: (inout WireReader) throws -> T) throws -> T {
        try readBody(bytes, body)
    }

    private func readError<T>(_ bytes: [UInt8], _ body: (inout WireReader) throws -> T) -> ChecklistError.Code? {
        do {
            _ = try readBody(bytes, body)
            return nil
        } catch {
            return (error as? ChecklistError)?.code
        }
    }

    private func readErrorField<T>(_ bytes: [UInt8], _ body: (inout WireReader) throws -> T) -> String? {
        do {
            _ = try readBody(bytes, body)
            return nil
        } catch {
            #expect((error as? ChecklistError)?.code == .badField)
            return (error as? ChecklistError)?.field
        }
    }
}

extension ItemFields {
    func encodedBytes() -> [UInt8] {
        var w = WireWriter()
        encode(into: &w)
        return w.bytes
    }
}
