import ChecklistModel
import ChecklistRandom
import ChecklistWire
import Testing

/// The PATCH path's fast paths against what they replace: `String(wireUTF8:)`
/// against `String(validating:as:)`, the inline one-byte varint reads and
/// writes at their boundaries, the sized cursor writes of AppliedOp,
/// ListChange and PATCH_OK against the field-by-field encodings, and the
/// one-reservation frames against `FrameEncoder`'s generic path.
@Suite(.timeLimit(.minutes(2))) struct WriteFastPathTests {
    static let edgeValues: [UInt64] = [0, 1, 0x7F, 0x80, 0x3FFF, 0x4000, UInt64(UInt32.max), 1 << 32, 1 << 63, .max]

    static func validated(_ bytes: [UInt8]) -> (fast: String?, reference: String?) {
        bytes.withUnsafeBytes { raw in (String(wireUTF8: raw), String(validating: raw, as: UTF8.self)) }
    }

    @Test func utf8MatchesTheStandardValidation() {
        let cases: [[UInt8]] = [
            [], Array("a".utf8), Array("Milk 2L".utf8), Array("12345678".utf8), Array("123456789".utf8),
            Array("Crème fraîche ☕ 日本 🎂".utf8), [0xEF, 0xBF, 0xBD], [0x41, 0xEF, 0xBF, 0xBD, 0x42],
            [0xEF, 0xBF], [0xEF, 0xBF, 0x41], [0x80], [0xC0, 0x80], [0xC1, 0xBF], [0xED, 0xA0, 0x80],  // overlong, surrogate
            [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFF], [0xF0, 0x9F, 0x8E],  // past U+10FFFF, cut off
            Array("0123456".utf8) + [0xE2, 0x98], Array("01234567".utf8) + [0xC3], [0x00, 0x7F],
        ]
        for bytes in cases {
            let (fast, reference) = Self.validated(bytes)
            #expect(fast == reference, "bytes \(bytes)")
        }
        var rng = SplitMix64(seed: 30)
        let alphabet: [UInt8] = [0x41, 0x7F, 0x80, 0xBF, 0xBD, 0xC2, 0xC3, 0xE2, 0xED, 0xEF, 0xF0, 0xF4, 0xFF, 0x9F]
        for _ in 0..<20_000 {
            let count = Int(rng.next() % 24)
            let bytes = (0..<count).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }
            let (fast, reference) = Self.validated(bytes)
            #expect(fast == reference, "bytes \(bytes)")
        }
        // ASCII texts of every length up to 64 (the ASCII fast path reads 8
        // bytes at a time), with at most one byte of the alphabet above put
        // anywhere: in a word read 8 at a time or in the tail.
        for _ in 0..<20_000 {
            let count = Int(rng.next() % 65)
            var bytes = (0..<count).map { _ in UInt8(rng.next() % 0x80) }
            if count > 0, rng.next() % 4 != 0 {
                bytes[Int(rng.next() % UInt64(count))] = alphabet[Int(rng.next() % UInt64(alphabet.count))]
            }
            let (fast, reference) = Self.validated(bytes)
            #expect(fast == reference, "bytes \(bytes)")
        }
    }

    @Test func varintsRoundTripAtEveryLength() throws {
        for v in Self.edgeValues {
            var w = WireWriter()
            w.writeVarint(v)
            w.writeVarint(v)
            #expect(w.count == 2 * WireSize.varint(v))
            let back = try WireReader.decode(w.bytes) { (r) throws(ChecklistError) in (try r.readVarint("a"), try r.readVarint("b")) }
            #expect(back.0 == v && back.1 == v)
            // Cut off anywhere inside: BAD_FIELD naming the field, as before.
            for cut in 0..<WireSize.varint(v) {
                #expect(throws: ChecklistError.self) {
                    _ = try WireReader.decode(Array(w.bytes.prefix(cut))) { (r) throws(ChecklistError) in try r.readVarint("x") }
                }
            }
        }
        do {
            _ = try WireReader.decode([]) { (r) throws(ChecklistError) in try r.readU8("flags") }
            Issue.record("read past the end")
        } catch {
            #expect(error.code == .badField && error.message.contains("body ends inside flags"))
        }
    }

    static func ops(_ rng: inout SplitMix64) -> [AppliedOperation] {
        func value() -> UInt64 { edgeValues[Int(rng.next() % UInt64(edgeValues.count))] }
        func signed() -> Int64 { Int64(bitPattern: value()) &- Int64(rng.next() % 3) }
        let texts = ["", "x", String(repeating: "a", count: 127), String(repeating: "b", count: 128), "Crème ☕ 日本 🎂"]
        func text() -> String { texts[Int(rng.next() % UInt64(texts.count))] }
        let fields = ItemFields(text: text(), checked: rng.next() & 1 == 0, due: rng.next() & 1 == 0 ? signed() : nil,
                                remind: rng.next() & 1 == 0, price: rng.next() & 1 == 0 ? signed() : nil,
                                clientKey: rng.next() & 1 == 0 ? text() : nil)
        let id = ItemID(value())
        return [
            .insert(id: id, index: value(), fields: fields), .setText(id, text()), .setChecked(id, true),
            .setChecked(id, false), .setDue(id, signed()), .setDue(id, nil), .setRemind(id, true),
            .setPrice(id, signed()), .setPrice(id, nil), .delete(id), .move(id, toIndex: value()),
            .setKey(id, text()), .setKey(id, nil),
        ]
    }

    @Test func sizedWritesAreTheFieldByFieldBytes() {
        var rng = SplitMix64(seed: 31)
        for round in 0..<300 {
            let ops = Self.ops(&rng)
            for op in ops {
                var reference = WireWriter()
                op.encode(into: &reference)
                var direct = WireWriter()
                direct.writeReserved(count: op.encodedBytes) { op.write(into: &$0) }
                #expect(direct.bytes == reference.bytes, "\(op) in round \(round)")
            }
            // ListChange: its sized encoding against the ops encoded one by one.
            let change = ListChange(list: ListID(Self.edgeValues[round % 10]), revision: Self.edgeValues[(round + 3) % 10],
                                    kind: .patched(ops))
            var reference = WireWriter()
            reference.writeVarint(change.list.rawValue)
            reference.writeVarint(change.revision)
            reference.writeU8(ListChange.KindCode.patched.rawValue)
            reference.writeVarint(ops.count)
            for op in ops { op.encode(into: &reference) }
            var encoded = WireWriter()
            change.encode(into: &encoded)
            #expect(encoded.bytes == reference.bytes, "round \(round)")
            #expect(change.encodedBytes == reference.count)
        }
    }

    /// A CHANGE push made at once is the frame `FrameEncoder` makes of it,
    /// client keys left out, and a patch too large for a CHANGES answer is
    /// sent `omitted`, on either side of the bound.
    @Test func encodedChangesAreTheEncoderFrames() {
        var rng = SplitMix64(seed: 32)
        for round in 0..<100 {
            let ops = Self.ops(&rng)
            let changes = [
                Change(namespace: .default, list: ListID(7), revision: Self.edgeValues[round % 10], kind: .patched(ops)),
                Change(namespace: .default, list: ListID(1 << 40), revision: 3, kind: .listCreated(name: "Shop ☕", icon: "cart")),
                Change(namespace: .default, list: ListID(2), revision: 200, kind: .listUpdated(name: "", icon: "")),
                Change(namespace: .default, list: ListID(2), revision: 201, kind: .listDeleted),
            ]
            for change in changes {
                let wire = ListChange(change)
                let bodyBytes = wire.encodedBytes
                // The largest limit that still omits, and the smallest that does not.
                let fits = UInt32(bodyBytes + Changes.maxHeaderBytes) + FrameHeader.minimumLength
                for (maxFrameBytes, omitted) in [(fits - 1, true), (fits, false), (1 << 24, false)] {
                    var encoder = FrameEncoder(compress: false)  // CHANGE pushes never are
                    var expected = WireWriter()
                    let sent = omitted ? ListChange(list: wire.list, revision: wire.revision, kind: .omitted) : wire
                    encoder.append(ChangePush(sent), requestID: FrameHeader.pushRequestID, to: &expected)
                    let encoded = EncodedChange(change, maxFrameBytes: maxFrameBytes)
                    #expect(encoded.frame == expected.bytes, "\(change.kind) under \(maxFrameBytes)")
                }
            }
        }
    }

    /// PATCH_OK framed in one reservation is the generic encoder's frame,
    /// compressed or not, after other frames in the same writer.
    @Test func patchOKFramesAreTheEncoderFrames() {
        for idCount in [0, 1, 2, 200, 2000] {
            let ids = (0..<idCount).map { PatchOK.Assignment(tempRef: UInt64($0 + 1), id: ItemID(UInt64($0) << 20)) }
            let message = PatchOK(list: ListID(1 << 35), revision: 0x4000, ids: ids)
            for compress in [false, true] {
                var generic = FrameEncoder(compress: compress)
                var expected = WireWriter()
                var sized = FrameEncoder(compress: compress)
                var actual = WireWriter(capacity: 0)
                for requestID in [1, 0xA1B2_C3D4] as [UInt32] {
                    generic.append(message, requestID: requestID, to: &expected)
                    sized.append(type: PatchOK.messageType, requestID: requestID, bodyBytes: message.encodedBytes, to: &actual) {
                        message.write(into: &$0)
                    }
                }
                #expect(actual.bytes == expected.bytes, "\(idCount) ids, compress \(compress)")
                var body = WireWriter()
                message.encode(into: &body)
                #expect(body.count == message.encodedBytes)
                #expect((try? PatchOK.decode(body: body.bytes)) == message)
            }
        }
    }
}
