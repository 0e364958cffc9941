@testable import ChecklistSnapshot
import ChecklistRandom
import Testing

/// `GzipMemberCompressor`: a block's gzip member starts as every member this
/// project writes does (what the parallel reader looks for), and zlib's
/// inflate gives the block back, for each level and for blocks of several
/// kinds, one member after another in one stream.
@Suite struct GzipMemberCompressorTests {
    /// Rows of repeated words with counters (compressible), random bytes
    /// (not), and an empty block.
    static func blocks() -> [[UInt8]] {
        var random = SplitMix64(seed: 7)
        let words = Array("milk eggs bread walk the dog ".utf8)
        var text: [UInt8] = []
        for n in 0..<20_000 { text += Array("\(n) ".utf8) + words[(n % 5)...] }
        let noise = (0..<70_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        return [text, noise, []]
    }

    @Test(arguments: [Int32(0), 1, 6, 9])
    func membersStartAsTheReaderExpectsAndInflateBack(level: Int32) throws {
        let compressor = try GzipMemberCompressor(level: level)
        var stream: [UInt8] = []
        var member: [UInt8] = []
        for block in Self.blocks() {
            try block.withUnsafeBytes { try compressor.compress($0, into: &member) }
            #expect(Array(member.prefix(8)) == ParallelGzipInflater.memberStart)
            // The trailer: CRC-32 and size of the block (RFC 1952 section 2.3.1).
            let trailer = member.suffix(8).map(UInt32.init)
            #expect(trailer[0] | trailer[1] << 8 | trailer[2] << 16 | trailer[3] << 24 == CRC32.checksum(block))
            #expect(Int(trailer[4] | trailer[5] << 8 | trailer[6] << 16 | trailer[7] << 24) == block.count)
            stream += member
        }
        #expect(try gunzip(stream) == Self.blocks().flatMap { $0 })
        let text = Self.blocks()[0]
        try text.withUnsafeBytes { try compressor.compress($0, into: &member) }
        if level > 0 { #expect(member.count < text.count / 3) }
    }

    @Test func levelsOutsideZlibsAreRefused() {
        #expect(throws: SnapshotError.self) { try GzipMemberCompressor(level: 10) }
        #expect(throws: SnapshotError.self) { try GzipMemberCompressor(level: -1) }
    }
}
