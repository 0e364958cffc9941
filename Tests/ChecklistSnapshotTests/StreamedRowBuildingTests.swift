import ChecklistModel
@testable import ChecklistSnapshot
import Testing

/// Rows built on the inflate workers of a streamed snapshot (the IMPORT
/// stream: `SnapshotDecoder.streamed(..., rowBuilding:)`): a sink gets
/// exactly the lists and rows, in order, that one stream decoded row by
/// row gives, wherever the members and the chunks are cut; a damaged or
/// cut stream fails with the same error, in the same chunk; and the
/// workers' CRC-32 of the content is the content's.
@Suite(.timeLimit(.minutes(2))) struct StreamedRowBuildingTests {
    typealias Sink = ParallelDecodeTests.RecordingSink

    /// What restoring a chunked stream gave.
    struct Restored {
        var sink: Sink
        var error: SnapshotError.Code?
        /// The chunk that reported the error (`chunks`: the end of the input).
        var failedAt: Int?
        var input: ParallelStreamInflater?
    }

    /// Restores `file` fed in `chunk`-byte chunks into a sink: one stream
    /// row by row (`parallel` false), or on the workers, building rows.
    static func restore(_ file: [UInt8], chunk: Int, parallel: Bool) throws -> Restored {
        let sink = Sink(building: parallel)
        var out = Restored(sink: sink)
        let decoder: SnapshotDecoder
        if parallel {
            let streamed = SnapshotDecoder.streamed(name: "test", workers: ParallelStreamInflateTests.workers, rowBuilding: sink.rowBuilding)
            decoder = streamed.decoder
            out.input = streamed.input
        } else {
            decoder = try SnapshotDecoder(name: "test")
        }
        let chunks = stride(from: 0, to: file.count, by: chunk).map { Array(file[$0..<min(file.count, $0 + chunk)]) }
        do {
            for (n, bytes) in chunks.enumerated() {
                out.failedAt = n
                if let input = out.input {
                    _ = try decoder.restore(into: sink)
                    input.feed(bytes)
                    _ = try decoder.restore(into: sink)
                } else {
                    var offset = 0
                    while try decoder.restore(into: sink) == nil && offset < bytes.count {
                        offset += bytes.withUnsafeBytes { decoder.feed(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
                    }
                }
            }
            out.failedAt = chunks.count
            decoder.endInput()
            out.input?.endInput()
            #expect(try decoder.restore(into: sink) != nil)
            out.failedAt = nil
        } catch let error as SnapshotError {
            out.error = error.code
        }
        return out
    }

    /// Both ways on `file` at `chunk`: the same outcome.
    @discardableResult
    static func expectSame(_ file: [UInt8], chunk: Int, sourceLocation: SourceLocation = #_sourceLocation) throws -> Restored {
        let serial = try restore(file, chunk: chunk, parallel: false)
        let parallel = try restore(file, chunk: chunk, parallel: true)
        #expect(parallel.error == serial.error && parallel.failedAt == serial.failedAt, "chunk \(chunk)", sourceLocation: sourceLocation)
        if serial.error == nil {
            #expect(parallel.sink.events == serial.sink.events, "chunk \(chunk)", sourceLocation: sourceLocation)
        }
        return parallel
    }

    @Test("members cut after records, chunks of any size: the rows of one stream, most built on the workers",
          arguments: [4099, 65_536, 150_001, 1 << 30])
    func sameRows(_ chunk: Int) throws {
        let content = ParallelDecodeTests.content(listSizes: [0, 1, 5000, 2, 0, 3, 700, 1, 60_000])
        let file = try ParallelDecodeTests.members(content, cuts: ParallelDecodeTests.cuts(content, every: 120))
        let parallel = try Self.expectSame(file, chunk: chunk)
        #expect(parallel.error == nil)
        #expect(parallel.sink.events.count > 65_000)
        // All but the first piece (the header's) decode their records
        // (a chunk of one piece on the reader's thread).
        #expect(parallel.sink.builtRows > parallel.sink.events.count / 2, "chunk \(chunk)")
        // The workers checksummed all of the content.
        let input = try #require(parallel.input)
        #expect(input.checksummedBytes == UInt64(content.count))
        #expect(input.contentCRC(upTo: UInt64(content.count)) == content.withUnsafeBytes { CRC32.update(0, $0) })
    }

    @Test("members cut inside records, and a chunk boundary at every offset of a stretch")
    func cutAnywhere() throws {
        let content = ParallelDecodeTests.content()
        let anywhere = Array(stride(from: 1000, to: content.count, by: 7001))
        let file = try ParallelDecodeTests.members(content, cuts: ParallelDecodeTests.cuts(content, every: 90, extra: anywhere))
        #expect(try Self.expectSame(file, chunk: 200_003).error == nil)
        // The first chunk ends at every offset of a short stretch; the rest
        // comes whole.
        let serial = try Self.restore(file, chunk: 1 << 30, parallel: false).sink.events
        for first in file.count / 3..<(file.count / 3 + 40) {
            #expect(try Self.twoChunks(file, at: first).events == serial, "cut at \(first)")
        }
    }

    /// `file` restored on the workers in two chunks, cut at `at`.
    static func twoChunks(_ file: [UInt8], at: Int) throws -> Sink {
        let sink = Sink(building: true)
        let (decoder, input) = SnapshotDecoder.streamed(name: "test", workers: ParallelStreamInflateTests.workers,
                                                        rowBuilding: sink.rowBuilding)
        for bytes in [Array(file[..<at]), Array(file[at...])] {
            _ = try decoder.restore(into: sink)
            input.feed(bytes)
            _ = try decoder.restore(into: sink)
        }
        input.endInput()
        #expect(try decoder.restore(into: sink) != nil)
        return sink
    }

    @Test("a corrupted member: the same error, from the same chunk", arguments: [0.2, 0.5, 0.77, 0.999])
    func corruptMember(_ at: Double) throws {
        let content = ParallelDecodeTests.content()
        var file = try ParallelDecodeTests.members(content, cuts: ParallelDecodeTests.cuts(content, every: 100))
        file[Int(Double(file.count) * at)] ^= 0x55
        let serial = try Self.restore(file, chunk: 100_000, parallel: false)
        let parallel = try Self.restore(file, chunk: 100_000, parallel: true)
        #expect(serial.error != nil)
        #expect(parallel.error == serial.error && parallel.failedAt == serial.failedAt)
    }

    @Test("a stream cut off anywhere: the same error, at the same chunk", arguments: [0.001, 0.3, 0.5, 0.9999])
    func cutOff(_ at: Double) throws {
        let content = ParallelDecodeTests.content()
        let file = try ParallelDecodeTests.members(content, cuts: ParallelDecodeTests.cuts(content, every: 100))
        let parallel = try Self.expectSame(Array(file.prefix(Int(Double(file.count) * at))), chunk: 100_000)
        #expect(parallel.error == .truncatedSnapshot)
    }

    @Test("a wrong trailer checksum is found with the workers' CRC")
    func wrongChecksum() throws {
        var content = ParallelDecodeTests.content(keys: false)
        // A letter of an item's text, inside a stretch the workers decode.
        let text = Array("Item 6000 of list 8".utf8)
        let at = try #require((0..<(content.count - text.count)).first { Array(content[$0..<($0 + text.count)]) == text })
        content[at] = UInt8(ascii: "J")
        let file = try ParallelDecodeTests.members(content, cuts: ParallelDecodeTests.cuts(content, every: 100))
        let parallel = try Self.expectSame(file, chunk: 120_000)
        #expect(parallel.error == .snapshotChecksum)
    }
}
