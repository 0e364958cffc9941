import ChecklistModel
import ChecklistRandom
import ChecklistWire
import Testing

/// `FrameDeflater`, the frame bodies' compressor: its streams inflate to
/// their input in libdeflate (`Zlib.decompress`) and in the zlib library,
/// over every match length and every distance symbol, and a page's body
/// still shrinks to less than half.
@Suite("Frame deflater", .timeLimit(.minutes(10)))
struct FrameDeflaterTests {
    /// Deflates `input`; the default limit allows the worst case of fixed
    /// codes (9 bits for each literal of 144 or more) plus the wrapping.
    static func deflate(_ input: [UInt8], limit: Int? = nil) -> [UInt8]? {
        var out: [UInt8] = []
        let ok = input.withUnsafeBytes { FrameDeflater.compress($0, into: &out, limit: limit ?? input.count * 9 / 8 + 64) }
        return ok ? out : nil
    }

    /// Inflates `packed` in both libraries and checks both against `input`.
    static func expectInflates(_ packed: [UInt8], to input: [UInt8], _ what: String) throws {
        #expect(packed[0] == 0x78 && packed[1] == 0x01, "zlib header, \(what)")
        #expect(try CompressionTests.decompress(packed, limit: input.count) == input, "libdeflate, \(what)")
        #expect(CrossLibraryCompressionTests.zlibInflate(packed, expectedCount: input.count) == input, "zlib, \(what)")
        if !input.isEmpty {
            #expect(throws: ChecklistError.self) { try CompressionTests.decompress(packed, limit: input.count - 1) }
        }
    }

    @Test func inputsOfEveryKindRoundTrip() throws {
        for input in CrossLibraryCompressionTests.inputs() {
            let packed = try #require(Self.deflate(input), "\(input.count) bytes")
            try Self.expectInflates(packed, to: input, "\(input.count) bytes")
        }
    }

    /// Copies of many lengths 4...258 at distances that reach every
    /// distance symbol (1...32,768) at both ends of its range, and every
    /// length at short distances.
    @Test func everyLengthAndDistanceSymbol() throws {
        var rng = SplitMix64(seed: 7)
        var distances: [Int] = []
        var base = 1
        for symbol in 0..<30 {
            let extra = symbol < 4 ? 0 : symbol / 2 - 1
            distances += [base, base + (1 << extra) - 1]
            base += 1 << extra
        }
        for distance in distances {
            for length in [4, 5, 10, 11, 18, 34, 66, 130, 227, 257, 258] {
                // Random bytes (no matches of their own), zeros up to the
                // distance (one run, one table slot), then the copy.
                var input = (0..<300).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                input += [UInt8](repeating: 0, count: max(0, distance - 300))
                for _ in 0..<length { input.append(input[input.count - distance]) }
                input.append(UInt8(truncatingIfNeeded: rng.next()))
                let packed = try #require(Self.deflate(input), "distance \(distance), length \(length)")
                try Self.expectInflates(packed, to: input, "distance \(distance), length \(length)")
            }
        }
        for length in 3...258 {
            for distance in [1, 5] {
                var input = (0..<distance).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                for _ in 0..<length { input.append(input[input.count - distance]) }
                input += [1, 2, 3]
                let packed = try #require(Self.deflate(input), "run of \(length) at \(distance)")
                try Self.expectInflates(packed, to: input, "run of \(length) at \(distance)")
            }
        }
    }

    @Test func randomSequencesRoundTrip() throws {
        var rng = SplitMix64(seed: 31)
        for _ in 0..<200 {
            let alphabet = 1 + Int(rng.next() % 20)
            let count = Int(rng.next() % 5000)
            let input = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next() % UInt64(alphabet)) }
            let packed = try #require(Self.deflate(input))
            try Self.expectInflates(packed, to: input, "\(count) bytes of \(alphabet) values")
        }
    }

    @Test func streamsLongerThanTheLimitAreRefused() throws {
        var rng = SplitMix64(seed: 42)
        let random = (0..<5000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        #expect(Self.deflate(random, limit: random.count - 1) == nil)
        #expect(Self.deflate(random, limit: 0) == nil)
        let text = CompressionTests.text(4500)
        let packed = try #require(Self.deflate(text))
        #expect(Self.deflate(text, limit: packed.count) == packed, "exactly the stream's length fits")
        for limit in max(0, packed.count - 12)..<packed.count {
            #expect(Self.deflate(text, limit: limit) == nil, "limit \(limit)")
        }
    }

    /// The frame encoder compresses a 100-row page (rows that repeat their
    /// layout, as the pages benchmark's do) to less than half, in place.
    @Test func aPageShrinksToLessThanHalf() throws {
        var body = WireWriter()
        body.writeVarint(1); body.writeVarint(7); body.writeVarint(200_000); body.writeVarint(100); body.writeVarint(5000)
        for row in 0..<100 {
            body.writeVarint(123_456 + row)
            let number = String(54_321 + row)
            body.writeString(String(repeating: "0", count: 8 - number.count) + number + String(repeating: "x", count: 32))
            body.writeU8(row % 3 == 0 ? 1 : 0)
        }
        var frame = WireWriter()
        var encoder = FrameEncoder(compress: true)
        encoder.append(type: .page, requestID: 9, to: &frame) { $0.bytes += body.bytes }
        #expect(frame.bytes[5] == FrameFlags.compressed.rawValue)
        #expect(frame.count - FrameHeader.size < body.count / 2, "\(frame.count - FrameHeader.size) of \(body.count) bytes")
        let packed = Array(frame.bytes.dropFirst(FrameHeader.size))
        try Self.expectInflates(packed, to: body.bytes, "a page")
    }
}
