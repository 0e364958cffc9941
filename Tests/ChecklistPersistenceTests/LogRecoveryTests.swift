import ChecklistModel
import ChecklistSnapshot
import ChecklistSnapshotFixtures
import ChecklistWire
import Foundation
import Testing
@testable import ChecklistPersistence

/// Recovery of damaged logs: a torn tail is cut off, damage in the middle is
/// an error naming file and offset.
@Suite(.timeLimit(.minutes(10))) struct LogRecoveryTests {
    let history = randomHistory(count: 100, store: FakeStore())

    /// Writes `history` into a new log in `dir`. With `durableAt`, waits for
    /// durability after those LSNs (so later records carry the proof).
    func writeLog(_ dir: TempDirectory, durableAt: Set<Int> = [], policy: FsyncPolicy = .always) throws {
        let log = try WriteAheadLog(directory: dir.path, nextLSN: 1, options: .init(policy: policy))
        for (i, change) in history.enumerated() {
            let lsn = try log.append(change)
            if durableAt.contains(i + 1) { try log.waitDurable(lsn) }
        }
        try log.close()
    }

    /// Offsets of the records in a segment file.
    func recordOffsets(_ bytes: [UInt8]) -> [Int] {
        var offsets: [Int] = []
        var p = LogRecordFormat.segmentHeaderBytes
        while p + 8 <= bytes.count {
            offsets.append(p)
            let length = Int(bytes.withUnsafeBytes { $0.u32BE(at: p) })
            p += 8 + length
        }
        return offsets
    }

    func expectCorrupt(_ dir: TempDirectory, file: String, offset: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try recover(dir)
            Issue.record("recovery should fail", sourceLocation: sourceLocation)
        } catch let error as PersistenceError {
            #expect(error.code == .corruptLog, sourceLocation: sourceLocation)
            #expect(error.file == file, sourceLocation: sourceLocation)
            #expect(error.offset == UInt64(offset), sourceLocation: sourceLocation)
            #expect(error.description.contains(file), sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
        }
    }

    /// Cut the last record at every possible length: the torn record is
    /// dropped, the file truncated, the log reopens and recovers cleanly.
    @Test func tornTailIsCutOff() throws {
        let dir = TempDirectory("torn")
        defer { dir.remove() }
        try writeLog(dir)
        let segment = LogSegments.path(in: dir.path, firstLSN: 1)
        let full = readFile(segment)
        let last = recordOffsets(full).last!
        for cut in (last + 1)..<full.count {
            writeFile(segment, Array(full[..<cut]))
            let (changes, report) = try recover(dir)
            #expect(changes == Array(history.dropLast()))
            #expect(report.tornTail?.offset == UInt64(last))
            #expect(report.tornTail?.file == segment)
            #expect(report.nextLSN == LSN(history.count))
            #expect(readFile(segment).count == last)
        }
        // After the cut the log continues normally.
        let log = try WriteAheadLog(directory: dir.path, nextLSN: LSN(history.count))
        try log.append(history.last!)
        try log.close()
        let (changes, report) = try recover(dir)
        #expect(changes == history)
        #expect(report.tornTail == nil)
    }

    /// A tail of zeros (the file grew, the data never reached the disk).
    @Test func zeroFilledTailIsCutOff() throws {
        let dir = TempDirectory("zeros")
        defer { dir.remove() }
        try writeLog(dir)
        let segment = LogSegments.path(in: dir.path, firstLSN: 1)
        let full = readFile(segment)
        writeFile(segment, full + [UInt8](repeating: 0, count: 4096))
        let (changes, report) = try recover(dir)
        #expect(changes == history)
        #expect(report.tornTail?.offset == UInt64(full.count))
        #expect(readFile(segment) == full)
    }

    /// A flipped byte in a record that later records prove was durable:
    /// recovery stops with file and offset.
    @Test(arguments: [10, 30, 49])
    func flippedByteInTheMiddleIsAnError(record: Int) throws {
        let dir = TempDirectory("flip")
        defer { dir.remove() }
        try writeLog(dir, durableAt: [50])
        let segment = LogSegments.path(in: dir.path, firstLSN: 1)
        var bytes = readFile(segment)
        let offset = recordOffsets(bytes)[record - 1]
        bytes[offset + 10] ^= 0x40 // inside the payload
        writeFile(segment, bytes)
        expectCorrupt(dir, file: segment, offset: offset)
    }

    /// A damaged length field: the record seems to run past the end of the
    /// file, but intact durable records follow it.
    @Test func corruptLengthInTheMiddleIsAnError() throws {
        let dir = TempDirectory("length")
        defer { dir.remove() }
        try writeLog(dir, durableAt: [20])
        let segment = LogSegments.path(in: dir.path, firstLSN: 1)
        var bytes = readFile(segment)
        let offset = recordOffsets(bytes)[9]
        bytes[offset] = 0x7F
        writeFile(segment, bytes)
        expectCorrupt(dir, file: segment, offset: offset)
    }

    /// Damage inside a batch that was never fsynced, with intact records of
    /// the same batch after it (pages reaching the disk out of order): those
    /// records were never durable, so the tail from the damage on is cut.
    @Test func damageInAnUnsyncedBatchIsATornTail() throws {
        let dir = TempDirectory("unsynced")
        defer { dir.remove() }
        // `.no`: nothing is fsynced after LSN 20 until the close (under
        // `.always` the flusher could fsync between appends).
        try writeLog(dir, durableAt: [20], policy: .no)
        let segment = LogSegments.path(in: dir.path, firstLSN: 1)
        var bytes = readFile(segment)
        let offsets = recordOffsets(bytes)
        // Records 21...100 were appended before LSN 21 was durable (the
        // close fsynced them all at once): zero record 60.
        for i in offsets[59]..<offsets[60] { bytes[i] = 0 }
        writeFile(segment, bytes)
        let (changes, report) = try recover(dir)
        #expect(changes == Array(history.prefix(59)))
        #expect(report.tornTail?.offset == UInt64(offsets[59]))
        #expect(report.nextLSN == 60)
    }

    /// A record whose CRC matches but whose change does not decode is never
    /// a torn write: always an error.
    @Test func undecodableRecordIsAnError() throws {
        let dir = TempDirectory("undecodable")
        defer { dir.remove() }
        try writeLog(dir)
        let segment = LogSegments.path(in: dir.path, firstLSN: 1)
        let bytes = readFile(segment)
        var w = WireWriter()
        let payload: [UInt8] = [101, 1, 0x7E] // lsn 101, lag 1, unknown change kind
        w.bytes = [0, 0, 0, 3]
        w.bytes += withUnsafeBytes(of: CRC32.checksum(payload).bigEndian) { Array($0) }
        w.bytes += payload
        writeFile(segment, bytes + w.bytes)
        expectCorrupt(dir, file: segment, offset: bytes.count)
    }

    /// Every segment but the last was fsynced whole before the next began:
    /// any damage there is an error, even at its end.
    @Test func damageInAnEarlierSegmentIsAnError() throws {
        let dir = TempDirectory("earlier")
        defer { dir.remove() }
        let log = try WriteAheadLog(directory: dir.path, nextLSN: 1, options: .init(policy: .no))
        for change in history.prefix(50) { try log.append(change) }
        try log.close()
        let log2 = try WriteAheadLog(directory: dir.path, nextLSN: 51, options: .init(policy: .no))
        for change in history.dropFirst(50) { try log2.append(change) }
        try log2.close()
        let first = LogSegments.path(in: dir.path, firstLSN: 1)
        let bytes = readFile(first)
        let last = recordOffsets(bytes).last!
        writeFile(first, Array(bytes.dropLast(3)))
        expectCorrupt(dir, file: first, offset: last)
    }

    @Test func missingSegmentIsAGap() throws {
        let dir = TempDirectory("gap")
        defer { dir.remove() }
        for (first, range) in [(1, 0..<30), (31, 30..<60), (61, 60..<100)] {
            let log = try WriteAheadLog(directory: dir.path, nextLSN: LSN(first), options: .init(policy: .no))
            for change in history[range] { try log.append(change) }
            try log.close()
        }
        #expect(try recover(dir).changes == history)
        try FileManager.default.removeItem(atPath: LogSegments.path(in: dir.path, firstLSN: 31))
        #expect { try recover(dir) } throws: { error in
            let e = error as? PersistenceError
            return e?.code == .logGap && e?.file == LogSegments.path(in: dir.path, firstLSN: 61)
        }
    }

    @Test func incompleteSegmentHeaderIsRemoved() throws {
        let dir = TempDirectory("header")
        defer { dir.remove() }
        try writeLog(dir)
        // A crash right after creating the next segment.
        writeFile(LogSegments.path(in: dir.path, firstLSN: 101), [0x43, 0x4B])
        let (changes, report) = try recover(dir)
        #expect(changes == history)
        #expect(report.tornTail?.offset == 0)
        #expect(report.nextLSN == 101)
        #expect(!FileManager.default.fileExists(atPath: LogSegments.path(in: dir.path, firstLSN: 101)))
    }
}
