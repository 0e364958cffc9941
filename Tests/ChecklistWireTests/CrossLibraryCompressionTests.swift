import CZlib
import ChecklistModel
import ChecklistRandom
import ChecklistWire
import Testing

/// `Zlib` (libdeflate on Linux) against the zlib library itself, both ways:
/// what one writes, the other inflates to the same bytes. The golden
/// vectors' compressed bodies (written by Protocol/vectors/generate.py's own
/// deflate encoder) inflate alike in both, and their bodies compressed by
/// `Zlib` inflate with zlib.
@Suite("Compression across libraries", .timeLimit(.minutes(10)))
struct CrossLibraryCompressionTests {
    /// zlib's `uncompress`, the reference inflater.
    static func zlibInflate(_ stream: [UInt8], expectedCount: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: max(expectedCount, 1))
        var outCount = uLongf(out.count)
        let rc = out.withUnsafeMutableBufferPointer { dst in
            stream.withUnsafeBufferPointer { src in
                uncompress(dst.baseAddress, &outCount, src.baseAddress, uLong(src.count))
            }
        }
        return rc == Z_OK ? Array(out.prefix(Int(outCount))) : nil
    }

    /// zlib's `compress2` at `level`, the reference deflater.
    static func zlibDeflate(_ input: [UInt8], level: Int32) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(compressBound(uLong(input.count))))
        var outCount = uLongf(out.count)
        let rc = out.withUnsafeMutableBufferPointer { dst in
            input.withUnsafeBufferPointer { src in
                compress2(dst.baseAddress, &outCount, src.baseAddress, uLong(src.count), level)
            }
        }
        precondition(rc == Z_OK)
        return Array(out.prefix(Int(outCount)))
    }

    static func inputs() -> [[UInt8]] {
        var rng = SplitMix64(seed: 30)
        let random = (0..<3000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        return [[], [0x61], CompressionTests.text(1024), CompressionTests.text(4500), CompressionTests.text(200_000),
                [UInt8](repeating: 0, count: 70_000), random]
    }

    @Test func theLibraryIsLibdeflateOnLinux() {
        #if os(Linux)
        #expect(Zlib.library == "libdeflate")
        #else
        #expect(Zlib.library == "zlib")
        #endif
    }

    @Test func oursInflatesWithZlib() throws {
        for input in Self.inputs() {
            for level: Int32 in [1, 6, 9] {
                let packed = try #require(CompressionTests.compress(input, level: level, limit: input.count + 64))
                #expect(packed[0] == 0x78, "CMF: deflate, 32 KiB window")
                #expect(Self.zlibInflate(packed, expectedCount: input.count) == input, "\(input.count) bytes, level \(level)")
            }
        }
    }

    @Test func zlibsInflatesWithOurs() throws {
        for input in Self.inputs() {
            for level: Int32 in [0, 1, 6, 9] {
                let packed = Self.zlibDeflate(input, level: level)
                #expect(try CompressionTests.decompress(packed, limit: input.count) == input, "\(input.count) bytes, level \(level)")
                if !input.isEmpty {
                    #expect(throws: ChecklistError.self) { try CompressionTests.decompress(packed, limit: input.count - 1) }
                }
            }
        }
    }

    /// Every compressed golden vector: its body inflates to the same bytes
    /// in zlib and in ours, and ours compresses those bytes into a stream
    /// zlib inflates back.
    @Test func goldenVectorBodiesBothWays() throws {
        let compressed = try GoldenVectors.all().filter { $0.encodeCheck == .roundtrip }
        #expect(compressed.count >= 2)
        for v in compressed {
            let body = Array(v.bytes.dropFirst(FrameHeader.size))
            let inflatedCount = try #require(v.inflatedBodyBytes)
            let ours = try CompressionTests.decompress(body, limit: inflatedCount)
            #expect(ours.count == inflatedCount, "\(v.name)")
            #expect(Self.zlibInflate(body, expectedCount: inflatedCount) == ours, "\(v.name)")
            let again = try #require(CompressionTests.compress(ours, limit: ours.count - 1), "\(v.name) compresses")
            #expect(Self.zlibInflate(again, expectedCount: ours.count) == ours, "\(v.name)")
        }
    }
}
