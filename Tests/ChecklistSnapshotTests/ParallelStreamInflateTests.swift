import ChecklistModel
@testable import ChecklistSnapshot
import ChecklistSnapshotFixtures
import Foundation
import Testing

/// `ParallelStreamInflater` (the IMPORT stream's members inflated on
/// workers): fed the same chunks, it decodes exactly what one stream
/// decodes, and a damaged or cut stream fails with the same error, found
/// in the same chunk.
@Suite(.timeLimit(.minutes(2))) struct ParallelStreamInflateTests {
    /// What decoding a chunked stream gave: the events (items counted, not
    /// kept), then the error's code and the chunk that reported it
    /// (`chunks.count`: the end of the input).
    struct Decoded: Equatable {
        var events: [SnapshotDecoder.Event] = []
        var items = 0
        var error: SnapshotError.Code?
        var failedAt: Int?
    }

    static let workers = InflateWorkers(threads: 3)

    /// Decodes `file` fed in `chunk`-byte chunks: through the decoder's own
    /// stream (`parallel` false, as `ImportStream` did), or the parallel one.
    static func decode(_ file: [UInt8], chunk: Int, parallel: Bool, limits: SnapshotLimits = .default,
                       pieceBytes: Int? = nil) throws -> Decoded {
        var out = Decoded()
        let decoder: SnapshotDecoder
        var input: ParallelStreamInflater?
        if let pieceBytes, parallel {
            let source = ParallelStreamInflater(workers: workers, maxPieceBytes: pieceBytes,
                                                maxLookBack: SnapshotDecoder.windowBytes(limits))
            (decoder, input) = (SnapshotDecoder(name: "test", limits: limits, source: source), source)
        } else if parallel {
            (decoder, input) = SnapshotDecoder.streamed(name: "test", limits: limits, workers: workers)
        } else {
            decoder = try SnapshotDecoder(name: "test", limits: limits)
        }
        /// True at the verified end.
        func drain() throws -> Bool {
            while true {
                switch try decoder.next() {
                case .needInput: return false
                case .end(let trailer):
                    out.events.append(.end(trailer))
                    return true
                case .item: out.items += 1
                case let event: out.events.append(event)
                }
            }
        }
        let chunks = stride(from: 0, to: file.count, by: chunk).map { Array(file[$0..<min(file.count, $0 + chunk)]) }
        for (n, bytes) in chunks.enumerated() {
            do {
                if let input {
                    _ = try drain()
                    input.feed(bytes)
                    _ = try drain()
                } else {
                    var offset = 0
                    while try !drain() && offset < bytes.count {
                        offset += bytes.withUnsafeBytes { decoder.feed(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
                    }
                }
            } catch let error as SnapshotError {
                out.error = error.code
                out.failedAt = n
                return out
            }
        }
        do {
            decoder.endInput()
            input?.endInput()
            #expect(try drain())
        } catch let error as SnapshotError {
            out.error = error.code
            out.failedAt = chunks.count
        }
        return out
    }

    /// The sample store's snapshot, content only (uncompressed).
    static func content(items: Int = 20_000) throws -> [UInt8] {
        let store = SnapshotSamples.store(items: items)
        var file: [UInt8] = []
        let writer = try SnapshotWriter(header: SnapshotSamples.header(for: store),
                                        options: .init(level: 1, compressionThreads: 1)) { file += $0 }
        try store.write(to: writer)
        _ = try writer.finish(endLSN: 0)
        return try gunzip(file)
    }

    /// `raw` as one gzip member per `memberBytes` (cut anywhere, inside
    /// records too), each as the project's writer starts them.
    static func members(_ raw: [UInt8], memberBytes: Int, level: Int32) throws -> [UInt8] {
        var out: [UInt8] = []
        for start in stride(from: 0, to: raw.count, by: memberBytes) {
            out += try gzip(Array(raw[start..<min(raw.count, start + memberBytes)]), level: level)
        }
        return out
    }

    /// Both paths on `file` at `chunk`: the same outcome.
    static func expectSame(_ file: [UInt8], chunk: Int, limits: SnapshotLimits = .default, pieceBytes: Int? = nil,
                           sourceLocation: SourceLocation = #_sourceLocation) throws -> Decoded {
        let serial = try decode(file, chunk: chunk, parallel: false, limits: limits)
        let parallel = try decode(file, chunk: chunk, parallel: true, limits: limits, pieceBytes: pieceBytes)
        #expect(parallel == serial, "chunk \(chunk)", sourceLocation: sourceLocation)
        return serial
    }

    @Test("members cut inside records, chunks of any size: the events of one stream", arguments: [4099, 65_536, 300_001, 1 << 30])
    func sameEvents(_ chunk: Int) throws {
        let raw = try Self.content()
        for (memberBytes, level) in [(70_001, Int32(0)), (250_007, Int32(1)), (9_999, Int32(1))] {
            let file = try Self.members(raw, memberBytes: memberBytes, level: level)
            #expect(file.withUnsafeBytes { ParallelGzipInflater.memberStarts(in: $0) }.count > 1)
            let decoded = try Self.expectSame(file, chunk: chunk)
            #expect(decoded.error == nil)
            #expect(decoded.items > 20_000)
            #expect(decoded.events.count > 3)
        }
    }

    @Test("a file of one member, and a file of the writer's own members")
    func oneMemberAndWriterMembers() throws {
        let raw = try Self.content()
        let whole = try gzip(raw, level: 1)
        _ = try Self.expectSame(whole, chunk: 100_000)
        let store = SnapshotSamples.store(items: 20_000)
        var file: [UInt8] = []
        let writer = try SnapshotWriter(header: SnapshotSamples.header(for: store),
                                        options: .init(level: 0, blockBytes: 100_000, compressionThreads: 2)) { file += $0 }
        try store.write(to: writer)
        _ = try writer.finish(endLSN: 0)
        #expect(try Self.expectSame(file, chunk: 333_333).error == nil)
    }

    @Test("a corrupted member mid-stream: the same error, from the same chunk", arguments: [0.2, 0.5, 0.77, 0.999])
    func corruptMember(_ at: Double) throws {
        let raw = try Self.content()
        for level in [Int32(0), 1] {
            var file = try Self.members(raw, memberBytes: 80_021, level: level)
            file[Int(Double(file.count) * at)] ^= 0x55
            // The records decoded before the error may differ by the output
            // of the last zlib call (dropped when it fails), which depends on
            // how the input was split; the error and its chunk do not.
            let serial = try Self.decode(file, chunk: 200_000, parallel: false)
            let parallel = try Self.decode(file, chunk: 200_000, parallel: true)
            #expect(serial.error != nil)
            #expect(parallel.error == serial.error && parallel.failedAt == serial.failedAt)
        }
    }

    @Test("a stream cut off anywhere: the same error, at the same chunk", arguments: [0.001, 0.3, 0.5, 0.9999])
    func cutOff(_ at: Double) throws {
        let raw = try Self.content()
        let file = try Self.members(raw, memberBytes: 80_021, level: 0)
        let decoded = try Self.expectSame(Array(file.prefix(Int(Double(file.count) * at))), chunk: 150_000)
        #expect(decoded.error == .truncatedSnapshot)
        #expect(decoded.failedAt == Int((Double(file.count) * at / 150_000).rounded(.up)))
    }

    @Test("member-start bytes inside a member: the guess is dropped, the stream goes on")
    func falseMemberStart() throws {
        // Stored (level 0) deflate keeps content bytes as they are: a long
        // extension record of member-start bytes puts many inside a member.
        var content = RawSnapshot()
        content.header()
        content.list(id: 1, items: 1)
        content.item(id: 1)
        for _ in 0..<4 {
            content.record(0x41, Array(repeating: 0x20, count: 70_000) + ParallelGzipInflater.memberStart + Array("after".utf8))
        }
        content.trailer(lists: 1, items: 1)
        let file = try gzip(content.bytes, level: 0) + gzip([], level: 0)
        #expect(file.withUnsafeBytes { ParallelGzipInflater.memberStarts(in: $0) }.count == 6)
        for chunk in [50_000, 1 << 20] {
            #expect(try Self.expectSame(file, chunk: chunk).error == nil)
        }
    }

    @Test("the size limit, and members bigger than a piece may inflate to")
    func limits() throws {
        let raw = try Self.content()
        let file = try gzip(raw, level: 1)
        // Pieces stop at the most they may hold; the rest goes on from there.
        for pieceBytes in [100_000, 70_001] {
            let members = try Self.members(raw, memberBytes: 400_009, level: 1)
            #expect(try Self.expectSame(members, chunk: 1 << 30, pieceBytes: pieceBytes).error == nil)
            #expect(try Self.expectSame(file, chunk: 180_000, pieceBytes: pieceBytes).error == nil)
        }
        var small = SnapshotLimits.default
        small.maxRawBytes = UInt64(raw.count / 3)
        #expect(try Self.expectSame(file, chunk: 1 << 30, limits: small).error == .decompressionLimit)
    }
}
