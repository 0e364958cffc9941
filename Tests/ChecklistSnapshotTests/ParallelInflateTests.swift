import ChecklistModel
@testable import ChecklistSnapshot
import ChecklistSnapshotFixtures
import Foundation
import Testing

/// `ParallelGzipInflater`: a file of many members read on several threads
/// gives exactly what one stream gives, and damage gives the same error.
@Suite(.timeLimit(.minutes(1))) struct ParallelInflateTests {
    /// Writes the sample store with small blocks (many members).
    static func write(_ directory: TempDirectory, threads: Int = 2, blockBytes: Int = 4096) throws -> String {
        let store = SnapshotSamples.store(items: 6000)
        let path = directory.file("many.ckss.gz")
        let writer = try SnapshotWriter(path: path, header: SnapshotSamples.header(for: store),
                                        options: .init(level: 1, blockBytes: blockBytes, compressionThreads: threads))
        try store.write(to: writer)
        _ = try writer.finish(endLSN: 0)
        return path
    }

    /// Every record and the trailer, or the error's code.
    static func read(_ path: String, threads: Int) -> Result<([SnapshotRecord], SnapshotTrailer?), SnapshotError> {
        Result { () throws(SnapshotError) in
            let reader = try SnapshotReader(path: path, inflateThreads: threads)
            var records: [SnapshotRecord] = []
            while let record = try reader.next() { records.append(record) }
            return (records, reader.trailer)
        }
    }

    @Test("many members read in parallel give the records one stream gives")
    func sameRecords() throws {
        let directory = TempDirectory("parallel")
        defer { directory.remove() }
        let path = try Self.write(directory)
        let starts = readFile(path).withUnsafeBytes { ParallelGzipInflater.memberStarts(in: $0) }
        #expect(starts.count > 10)
        let serial = try Self.read(path, threads: 1).get()
        let parallel = try Self.read(path, threads: 3).get()
        #expect(parallel.0 == serial.0)
        #expect(parallel.1 == serial.1)
        #expect(serial.0.count > 6000)
    }

    @Test("one member (a single-threaded writer) reads the same in parallel mode")
    func oneMember() throws {
        let directory = TempDirectory("parallel")
        defer { directory.remove() }
        let path = try Self.write(directory, threads: 1)
        #expect(readFile(path).withUnsafeBytes { ParallelGzipInflater.memberStarts(in: $0) }.count == 1)
        #expect(try Self.read(path, threads: 3).get().0 == Self.read(path, threads: 1).get().0)
    }

    @Test("a damaged or cut member gives the error one stream gives", arguments: [0.3, 0.6, 0.999])
    func damage(_ at: Double) throws {
        let directory = TempDirectory("parallel")
        defer { directory.remove() }
        let path = try Self.write(directory)
        var bytes = readFile(path)
        let flipped = directory.file("flipped.ckss.gz")
        bytes[Int(Double(bytes.count) * at)] ^= 0x55
        writeFile(flipped, bytes)
        let cut = directory.file("cut.ckss.gz")
        writeFile(cut, Array(readFile(path).prefix(Int(Double(bytes.count) * at))))
        for damaged in [flipped, cut] {
            guard case .failure(let serial) = Self.read(damaged, threads: 1) else {
                Issue.record("\(damaged) read without error")
                continue
            }
            guard case .failure(let parallel) = Self.read(damaged, threads: 3) else {
                Issue.record("\(damaged) read without error in parallel")
                continue
            }
            #expect(parallel.code == serial.code)
        }
    }

    @Test("bytes that look like a member start inside a member fail over to the stream")
    func falseMemberStart() throws {
        let directory = TempDirectory("parallel")
        defer { directory.remove() }
        // Stored (level 0) deflate keeps content bytes as they are: an
        // extension record holding the member-start bytes puts them inside
        // a member.
        var content = RawSnapshot()
        content.header()
        content.list(id: 1, items: 1)
        content.item(id: 1)
        content.record(0x41, ParallelGzipInflater.memberStart + Array("after".utf8))
        content.trailer(lists: 1, items: 1)
        let path = directory.file("stored.ckss.gz")
        writeFile(path, try gzip(content.bytes, level: 0) + gzip([], level: 0))
        #expect(readFile(path).withUnsafeBytes { ParallelGzipInflater.memberStarts(in: $0) }.count == 3)
        #expect(try Self.read(path, threads: 3).get().0 == Self.read(path, threads: 1).get().0)
    }
}
