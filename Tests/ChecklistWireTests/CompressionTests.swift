import ChecklistModel
import ChecklistRandom
import ChecklistWire
import Testing

@Suite("Compression", .timeLimit(.minutes(10)))
struct CompressionTests {
    static func compress(_ input: [UInt8], level: Int32 = 1, limit: Int? = nil) -> [UInt8]? {
        var out: [UInt8] = []
        let ok = input.withUnsafeBytes { Zlib.compress($0, into: &out, limit: limit ?? input.count + 64, level: level) }
        return ok ? out : nil
    }

    static func decompress(_ input: [UInt8], limit: Int) throws(ChecklistError) -> [UInt8] {
        let result = input.withUnsafeBytes { raw in
            Result { () throws(ChecklistError) -> [UInt8] in try Zlib.decompress(raw, limit: limit) }
        }
        return try result.get()
    }

    static func text(_ count: Int) -> [UInt8] {
        var rng = SplitMix64(seed: UInt64(count))
        let words = ["milk ", "bread ", "eggs ", "apples ", "call mum ", "dentist ", "☕ "].map { Array($0.utf8) }
        var out: [UInt8] = []
        while out.count < count { out += words[Int(rng.next() % UInt64(words.count))] }
        return Array(out.prefix(count))
    }

    @Test(arguments: [0, 1, 100, 1023, 1024, 65_536, 300_000])
    func roundTrip(_ count: Int) throws {
        let input = Self.text(count)
        for level: Int32 in [1, 6, 9] {
            let packed = try #require(Self.compress(input, level: level))
            #expect(packed.count >= 6)  // 2-byte header, data, Adler-32
            #expect(packed[0] & 0x0F == 8, "CM 8: deflate")
            #expect((UInt16(packed[0]) << 8 | UInt16(packed[1])) % 31 == 0, "FCHECK")
            #expect(try Self.decompress(packed, limit: count) == input)
        }
    }

    @Test func randomBytesRoundTrip() throws {
        var rng = SplitMix64(seed: 42)
        let input = (0..<5000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        let packed = try #require(Self.compress(input))
        #expect(try Self.decompress(packed, limit: input.count) == input)
        // Incompressible: it does not fit in fewer bytes than the input.
        #expect(Self.compress(input, limit: input.count - 1) == nil)
        #expect(Self.compress(input, limit: 0) == nil)
    }

    @Test func decompressionLimitIsExact() throws {
        let input = [UInt8](repeating: 0x61, count: 100_000)
        let packed = try #require(Self.compress(input, level: 9))
        #expect(try Self.decompress(packed, limit: 100_000) == input)
        do {
            _ = try Self.decompress(packed, limit: 99_999)
            Issue.record("inflated past the limit")
        } catch {
            #expect(error.code == .frameTooLarge)
        }
    }

    /// A body of a few KiB inflating past the default 4 MiB limit is
    /// refused, without inflating all of it, and the frame is skipped.
    @Test func bombAtTheDefaultLimit() throws {
        let limit = GoldenVectors.defaultMaxFrameBytes
        var w = WireWriter()
        w.writeVarint(UInt64(8 << 20))
        let body = w.bytes + [UInt8](repeating: 0, count: 8 << 20)
        let packed = try #require(Self.compress(body, level: 9))
        #expect(packed.count < 20_000)
        let frame = Self.frame(type: .createList, flags: .compressed, body: packed)
        guard case .frame(_, let consumed, .failure(let e)) = Codec.parse(frame, direction: .request, maxFrameBytes: limit) else {
            Issue.record("the bomb was not refused")
            return
        }
        #expect(e.code == .frameTooLarge && consumed == frame.count)
    }

    /// The inflated body may be exactly maxFrameBytes - 6 bytes, not one more.
    @Test func inflatedBodyLimitIsMaxFrameBytesMinusSix() throws {
        let maxFrameBytes: UInt32 = 2000
        for (bodyCount, accepted) in [(1994, true), (1995, false)] {
            // CREATE_LIST: name of n bytes (2-byte length), empty icon.
            let nameBytes = bodyCount - 3
            let create = CreateList(name: String(repeating: "a", count: nameBytes), icon: "")
            let body = create.encodedBody()
            #expect(body.count == bodyCount)
            let frame = Self.frame(type: .createList, flags: .compressed, body: try #require(Self.compress(body)))
            let outcome = Codec.parse(frame, direction: .request, maxFrameBytes: maxFrameBytes)
            switch outcome {
            case .frame(_, _, .success(.request(.createList(let c)))):
                #expect(accepted && c == create)
            case .frame(_, _, .failure(let e)):
                #expect(!accepted && e.code == .frameTooLarge)
            default:
                Issue.record("\(outcome)")
            }
        }
    }

    @Test func corruptStreamsAreBadFieldBody() throws {
        let good = try #require(Self.compress(Array("Groceries".utf8)))
        var flipped = good
        flipped[flipped.count - 1] ^= 0x01  // Adler-32 mismatch
        let cases: [[UInt8]] = [
            [], [0x78], Array("not zlib".utf8), Array(good.dropLast()), good + [0], flipped,
            [0x78, 0x9C, 0xFF, 0xFF, 0xFF, 0xFF],
        ]
        for bytes in cases {
            do {
                _ = try Self.decompress(bytes, limit: 1 << 20)
                Issue.record("\(bytes) inflated")
            } catch {
                #expect(error.code == .badField && error.field == "body", "\(bytes): \(error)")
            }
        }
    }

    // MARK: - FrameEncoder

    @Test func encoderCompressesOnlyFromTheThresholdAndWhenItPays() throws {
        #expect(FrameEncoder.compressionThreshold == 1024)
        // PONG bodies: 2-byte length + data.
        let cases: [(data: [UInt8], compress: Bool, expectCompressed: Bool)] = [
            (Self.text(1021), true, false),        // body 1023: below the threshold
            (Self.text(1022), true, true),         // body 1024: compressible
            (Self.text(50_000), true, true),
            (Self.text(50_000), false, false),     // compression off
            (Self.randomBytes(4000), true, false), // does not pay
        ]
        for c in cases {
            var w = WireWriter()
            var encoder = FrameEncoder(compress: c.compress)
            let pong = Pong(data: c.data)
            encoder.append(pong, requestID: 7, to: &w)
            let plainBody = pong.encodedBody()
            #expect(w.bytes[5] == (c.expectCompressed ? 1 : 0), "data \(c.data.count), compress \(c.compress)")
            if c.expectCompressed {
                #expect(w.bytes.count - FrameHeader.size < plainBody.count)
            } else {
                #expect(Array(w.bytes[FrameHeader.size...]) == plainBody)
            }
            let (header, decoded) = try Codec.decodeOne(w.bytes, direction: .response)
            #expect(header.requestID == 7 && decoded == .server(.pong(pong)))
        }
    }

    @Test func encoderAppendsSeveralFramesToOneWriter() throws {
        var w = WireWriter()
        var encoder = FrameEncoder(compress: true)
        let big = Lists(lists: (1...60).map {
            ListSummary(id: ListID(UInt64($0)), name: "List \($0)", icon: "No Icon", itemCount: 1, uncheckedCount: 1, revision: 2)
        })
        encoder.append(Ping(data: [1]), requestID: 1, to: &w)
        encoder.append(big, requestID: 2, to: &w)
        encoder.append(Ping(data: [3]), requestID: 3, to: &w)
        encoder.append(big, requestID: 4, to: &w)
        var offset = 0
        var seen: [UInt32] = []
        while offset < w.bytes.count {
            guard case .frame(let h, let consumed, .success(let m)) = Codec.parse(w.bytes[offset...], direction: direction(at: offset, in: w.bytes)) else {
                Issue.record("no frame at \(offset)")
                return
            }
            if h.type == .lists {
                #expect(h.flags == .compressed && m == .server(.lists(big)))
            }
            seen.append(h.requestID)
            offset += consumed
        }
        #expect(seen == [1, 2, 3, 4])
    }

    private func direction(at offset: Int, in bytes: [UInt8]) -> GoldenVector.Direction {
        bytes[offset + 4] & 0x80 == 0 ? .request : .response
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var rng = SplitMix64(seed: 7)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }

    static func frame(type: MessageType, flags: FrameFlags, requestID: UInt32 = 1, body: [UInt8]) -> [UInt8] {
        let length = UInt32(6 + body.count)
        return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF),
                type.rawValue, flags.rawValue,
                UInt8(requestID >> 24), UInt8(requestID >> 16 & 0xFF), UInt8(requestID >> 8 & 0xFF), UInt8(requestID & 0xFF)]
            + body
    }
}
