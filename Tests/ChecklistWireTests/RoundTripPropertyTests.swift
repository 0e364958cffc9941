import ChecklistModel
import ChecklistRandom
import ChecklistWire
import Testing

/// Random values with a bias towards the edges of every encoding.
struct Arbitrary {
    var rng: SplitMix64

    mutating func int(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
    mutating func bool() -> Bool { rng.next() & 1 == 1 }

    /// Varint values: small, at 7-bit group boundaries, or anything.
    mutating func u64(max: UInt64 = .max) -> UInt64 {
        let v: UInt64
        switch int(4) {
        case 0: v = UInt64(int(200))
        case 1:
            let shift = UInt64(int(64))
            v = (UInt64(1) << shift) &+ UInt64(int(3)) &- 1
        case 2: v = [0, 1, 127, 128, 16383, 16384, UInt64(UInt32.max), 1 << 63, .max][int(9)]
        default: v = rng.next()
        }
        return max == .max ? v : v % (max + 1)
    }

    mutating func i64() -> Int64 {
        switch int(3) {
        case 0: return Int64(int(2001)) - 1000
        case 1: return [Int64.min, Int64.max, -1, 0, 1, Int64.min + 1, Int64.max - 1][int(7)]
        default: return Int64(bitPattern: rng.next())
        }
    }

    mutating func text() -> String {
        let pieces = ["", "a", "Milk", "Crème fraîche", "☕", "日本", "🎂", " ", "\u{0}", "\n", "x"]
        return (0..<int(6)).map { _ in pieces[int(pieces.count)] }.joined()
    }

    mutating func fields() -> ItemFields {
        ItemFields(text: text(), checked: bool(), due: bool() ? i64() : nil, remind: bool(), price: bool() ? i64() : nil,
                   clientKey: int(4) == 0 ? text() : nil)
    }

    mutating func ref() -> ItemRef {
        // ItemRef carries 63 bits: r >> 1.
        bool() ? .id(ItemID(u64(max: UInt64.max >> 1))) : .temp(u64(max: UInt64.max >> 1))
    }

    mutating func op() -> PatchOperation {
        switch int(10) {
        case 0:
            let position: InsertPosition
            switch int(3) {
            case 0: position = .index(u64())
            case 1: position = .after(ref())
            default: position = .end
            }
            // tempRef 0 means none on the wire, so a present tempRef is non-zero.
            return .insert(tempRef: bool() ? nil : max(1, u64()), position: position, fields: fields())
        case 1: return .setText(ref(), text())
        case 2: return .setChecked(ref(), bool())
        case 3: return .toggle(ref())
        case 4: return .setDue(ref(), bool() ? i64() : nil)
        case 5: return .setRemind(ref(), bool())
        case 6: return .setPrice(ref(), bool() ? i64() : nil)
        case 7: return .delete(ref())
        case 8: return .setKey(ref(), bool() ? text() : nil)
        default: return .move(ref(), toIndex: u64())
        }
    }

    mutating func item() -> Item { Item(id: ItemID(u64()), fields: fields()) }

    mutating func summary() -> ListSummary {
        ListSummary(id: ListID(u64()), name: text(), icon: text(), itemCount: u64(), uncheckedCount: u64(), revision: u64())
    }
}

@Suite("Round-trip properties", .timeLimit(.minutes(10)))
struct RoundTripPropertyTests {
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func patchOperations(_ seed: UInt64) throws {
        var a = Arbitrary(rng: SplitMix64(seed: seed))
        for _ in 0..<500 {
            let op = a.op()
            var w = WireWriter()
            op.encode(into: &w)
            let back = try WireReader.decode(w.bytes) { (r) throws(ChecklistError) in
                let op = try PatchOperation.decode(from: &r)
                #expect(r.remaining == 0)
                return op
            }
            #expect(back == op)
        }
    }

    @Test(arguments: [5, 6] as [UInt64])
    func patches(_ seed: UInt64) throws {
        var a = Arbitrary(rng: SplitMix64(seed: seed))
        for i in 0..<200 {
            let patch = Patch(list: ListID(a.u64()), baseRevision: a.bool() ? a.u64() : nil,
                              ops: (0..<1 + a.int(20)).map { _ in a.op() })
            let request = Request.patch(patch)
            let compress = i % 2 == 0
            let frame = DecodedMessage.request(request).encoded(requestID: UInt32(i), compress: compress)
            let (header, back) = try Codec.decodeOne(frame, direction: .request)
            #expect(header.requestID == UInt32(i))
            #expect(back == .request(request))
        }
    }

    @Test(arguments: [7, 8] as [UInt64])
    func items(_ seed: UInt64) throws {
        var a = Arbitrary(rng: SplitMix64(seed: seed))
        for _ in 0..<1000 {
            let fields = a.fields()
            #expect(try readBody(fields.encodedBytes()) { try ItemFields.decode(from: &$0) } == fields)
        }
        for i in 0..<100 {
            let rows = (0..<a.int(60)).map { _ in a.item() }
            let page = PageMessage(list: ListID(a.u64()), revision: a.u64(), total: a.u64(), offset: a.u64(), rows: rows)
            let frame = DecodedMessage.server(.page(page)).encoded(requestID: 1, compress: i % 3 == 0)
            let (_, back) = try Codec.decodeOne(frame, direction: .response)
            #expect(back == .server(.page(page)))
        }
    }

    @Test func otherMessages() throws {
        var a = Arbitrary(rng: SplitMix64(seed: 9))
        for i in 0..<200 {
            let summaries = (0..<a.int(30)).map { _ in a.summary() }
            let messages: [DecodedMessage] = [
                .request(.hello(Hello(minVersion: a.u64(), maxVersion: a.u64(), features: Features(rawValue: a.u64()), clientName: a.text()))),
                .request(.ping(Ping(data: (0..<a.int(1025)).map { _ in UInt8(truncatingIfNeeded: a.rng.next()) }))),
                .request(.createList(CreateList(name: a.text(), icon: a.text()))),
                .request(.updateList(UpdateList(list: ListID(a.u64()), name: a.bool() ? a.text() : nil, icon: a.bool() ? a.text() : nil))),
                .request(.deleteList(DeleteList(list: ListID(a.u64())))),
                .request(.getPage(GetPage(list: ListID(a.u64()), filter: RowFilter.allCases[a.int(3)],
                                          start: a.bool() ? .offset(a.u64()) : .anchor(ItemID(a.u64())), limit: a.u64()))),
                .server(.lists(Lists(lists: summaries))),
                .server(.listCreated(ListInfo(summary: a.summary()))),
                .server(.listUpdated(ListInfo(summary: a.summary()))),
                .server(.listDeleted(ListDeleted(list: ListID(a.u64()), revision: a.u64()))),
                .server(.patchOK(PatchOK(list: ListID(a.u64()), revision: a.u64(),
                                         ids: (0..<a.int(20)).map { _ in .init(tempRef: a.u64(), id: ItemID(a.u64())) }))),
                .server(.error(ErrorMessage(ChecklistError(.init(rawValue: UInt16(a.int(16))), a.text(),
                                                           field: a.bool() ? a.text() : nil, revision: a.bool() ? a.u64() : nil)))),
                .server(.helloOK(HelloOK(version: a.u64(), features: Features(rawValue: a.u64()), serverName: a.text(),
                                         limits: Limits(maxFrameBytes: UInt32(a.u64(max: UInt64(UInt32.max))),
                                                        maxPageRows: UInt32(a.u64(max: UInt64(UInt32.max))),
                                                        maxTextBytes: UInt32(a.u64(max: UInt64(UInt32.max))),
                                                        maxBatchOps: UInt32(a.u64(max: UInt64(UInt32.max))))))),
            ]
            for m in messages {
                let direction: GoldenVector.Direction = if case .request = m { .request } else { .response }
                let (_, back) = try Codec.decodeOne(m.encoded(requestID: UInt32(i), compress: i % 2 == 1), direction: direction)
                #expect(back == m)
            }
        }
    }

    /// Damaged frames never trap: every vector with random bytes changed,
    /// cut short or lengthened decodes to a message or to an error.
    @Test func damagedFramesNeverTrap() throws {
        var a = Arbitrary(rng: SplitMix64(seed: 10))
        let vectors = try GoldenVectors.all()
        for v in vectors {
            for _ in 0..<30 {
                var bytes = v.bytes
                switch a.int(3) {
                case 0 where bytes.count > 10:
                    for _ in 0..<1 + a.int(4) { bytes[10 + a.int(bytes.count - 10)] = UInt8(truncatingIfNeeded: a.rng.next()) }
                case 1 where bytes.count > 10:
                    // Keep the frame consistent: cut the body and fix the length.
                    bytes = Array(bytes.prefix(10 + a.int(bytes.count - 10)))
                    let length = UInt32(bytes.count - 4)
                    bytes[0] = UInt8(length >> 24); bytes[1] = UInt8(length >> 16 & 0xFF)
                    bytes[2] = UInt8(length >> 8 & 0xFF); bytes[3] = UInt8(length & 0xFF)
                default:
                    bytes[a.int(bytes.count)] = UInt8(truncatingIfNeeded: a.rng.next())
                }
                _ = Codec.parse(bytes, direction: v.direction, maxFrameBytes: v.limit)
            }
        }
    }
}
