import ChecklistModel
@testable import ChecklistSnapshot
import ChecklistSnapshotFixtures
import Foundation
import Testing

/// The content checksum of a file read in parallel: the workers take each
/// stretch's CRC-32, the reader combines them and finishes the last one up
/// to the trailer. It must agree with the stream's, and catch what it does.
@Suite(.timeLimit(.minutes(1))) struct ParallelChecksumTests {
    /// `items` items of one list, then the trailer (its CRC wrong by one
    /// bit with `wrongCRC`).
    static func content(items: UInt64, wrongCRC: Bool = false) -> RawSnapshot {
        var s = RawSnapshot()
        s.header()
        s.list(id: 1, items: items)
        for id in 1...items { s.item(id: id, text: "item \(id) with some text") }
        s.trailer(lists: 1, items: items, crc: wrongCRC ? CRC32.checksum(s.bytes) ^ 1 : nil)
        return s
    }

    /// `raw` compressed as one member per `member` bytes.
    static func members(_ raw: [UInt8], member: Int) throws -> [UInt8] {
        var out: [UInt8] = []
        for start in stride(from: 0, to: raw.count, by: member) {
            out += try gzip(Array(raw[start..<min(raw.count, start + member)]), level: 1)
        }
        return out
    }

    static func read(_ bytes: [UInt8], threads: Int, limits: SnapshotLimits = .default) -> Result<(Int, SnapshotTrailer?), SnapshotError> {
        let directory = TempDirectory("parallel-crc")
        defer { directory.remove() }
        let path = directory.file("members.ckss.gz")
        writeFile(path, bytes)
        return Result { () throws(SnapshotError) in
            let reader = try SnapshotReader(path: path, limits: limits, inflateThreads: threads)
            var records = 0
            while try reader.next() != nil { records += 1 }
            return (records, reader.trailer)
        }
    }

    // Member sizes: smaller than the trailer record (it spans several),
    // a size that splits the trailer, and the writer's size.
    @Test("a file of many members checks out in parallel as in one stream", arguments: [7, 97, 4096, 1 << 20])
    func sameChecksum(member: Int) throws {
        let raw = Self.content(items: 3000).bytes
        let file = try Self.members(raw, member: member)
        let serial = try Self.read(file, threads: 1).get()
        let parallel = try Self.read(file, threads: 3).get()
        #expect(serial.0 == 3001)
        #expect(parallel.0 == serial.0)
        #expect(parallel.1 != nil)
        #expect(parallel.1 == serial.1)
    }

    @Test("a wrong trailer checksum is reported in parallel", arguments: [97, 4096])
    func wrongChecksum(member: Int) throws {
        let raw = Self.content(items: 3000, wrongCRC: true).bytes
        let file = try Self.members(raw, member: member)
        for threads in [1, 3] {
            guard case .failure(let error) = Self.read(file, threads: threads) else {
                Issue.record("read without error on \(threads) threads")
                continue
            }
            #expect(error.code == .snapshotChecksum)
        }
    }

    @Test("a changed byte in a middle stretch that still inflates is caught by the checksum")
    func changedStretch() throws {
        var raw = Self.content(items: 3000).bytes
        // A text byte in the middle: every record still decodes.
        let at = raw.count / 2
        let text = raw[(at - 40)..<(at + 40)].firstIndex(of: UInt8(ascii: "s"))!
        raw[text] = UInt8(ascii: "S")
        let file = try Self.members(raw, member: 4096)
        #expect(file.withUnsafeBytes { ParallelGzipInflater.memberStarts(in: $0) }.count > 10)
        for threads in [1, 3] {
            guard case .failure(let error) = Self.read(file, threads: threads) else {
                Issue.record("read without error on \(threads) threads")
                continue
            }
            #expect(error.code == .snapshotChecksum)
        }
    }

    @Test("the workers' checksum of what was handed out matches the bytes, back to the look-back", arguments: [97, 4096])
    func inflaterChecksum(member: Int) throws {
        let raw = Self.content(items: 3000).bytes
        let directory = TempDirectory("parallel-crc")
        defer { directory.remove() }
        let path = directory.file("members.ckss.gz")
        writeFile(path, try Self.members(raw, member: member))
        let lookBack = 10_000
        let source = try ParallelGzipInflater(path: path, threads: 3, maxLookBack: lookBack)
        var out: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1000, alignment: 16)
        defer { buffer.deallocate() }
        reading: while true {
            switch try source.inflate(into: buffer, fail: { code, message in SnapshotError(code, message) }) {
            case .produced(let n): out += buffer[0..<n]
            case .end: break reading
            case .needInput: Issue.record("a mapped file needs no input"); break reading
            }
        }
        #expect(out == raw)
        // Every byte came from a stretch the workers checksummed.
        #expect(source.checksummedBytes == UInt64(raw.count))
        for back in [0, 1, 500, member, lookBack] {
            let offset = raw.count - back
            #expect(source.contentCRC(upTo: UInt64(offset)) == CRC32.checksum(Array(raw[0..<offset])), "offset \(offset)")
        }
    }

    @Test("stretches checksummed by the workers, then the stream after a stretch that fails, check out together")
    func workersThenStream() throws {
        // The items, an extension record holding the member start bytes,
        // then the trailer over all of it.
        var content = RawSnapshot()
        content.header()
        content.list(id: 1, items: 3000)
        for id in UInt64(1)...3000 { content.item(id: id, text: "item \(id) with some text") }
        let tail = content.bytes.count
        content.record(0x41, ParallelGzipInflater.memberStart + Array("after".utf8))
        content.trailer(lists: 1, items: 3000)
        // Level-1 members for the items; the rest stored (level 0), so the
        // member start bytes sit inside that member and its stretch fails.
        let file = try Self.members(Array(content.bytes[0..<tail]), member: 4096)
            + gzip(Array(content.bytes[tail...]), level: 0)
        #expect(file.withUnsafeBytes { ParallelGzipInflater.memberStarts(in: $0) }.count > 10)
        let serial = try Self.read(file, threads: 1).get()
        let parallel = try Self.read(file, threads: 3).get()
        #expect(parallel.0 == 3001)
        #expect(parallel.0 == serial.0)
        #expect(parallel.1 == serial.1)
    }
}
