import ChecklistModel
@testable import ChecklistSnapshot
import ChecklistSnapshotFixtures
import ChecklistRandom
import ChecklistWire
import Foundation
import Testing

/// Compresses `raw` into one gzip member.
func gzip(_ raw: [UInt8], level: Int32 = 6) throws -> [UInt8] {
    try raw.withUnsafeBytes { (input) throws(SnapshotError) in try Gzip.compress(input, level: level) }
}

/// Builds uncompressed snapshot content record by record.
struct RawSnapshot {
    var bytes: [UInt8] = SnapshotFormat.magic + [0x00, 0x01]

    mutating func record(_ type: UInt8, _ body: [UInt8]) {
        var w = WireWriter()
        w.writeU8(type)
        w.writeBytes(body)
        bytes += w.bytes
    }

    mutating func header(_ header: SnapshotHeader = SnapshotHeader(createdAt: 0, source: "raw", listCount: 1, itemCount: 1, startLSN: 0, nextListID: ListID(2))) {
        var w = WireWriter()
        header.encode(into: &w)
        record(SnapshotRecordType.header.rawValue, w.bytes)
    }

    mutating func list(id: UInt64, items: UInt64) {
        var w = WireWriter()
        SnapshotList(namespace: .default, id: ListID(id), name: "L", icon: "", revision: 1, nextItemID: ItemID(items + 1), itemCount: items).encode(into: &w)
        record(SnapshotRecordType.list.rawValue, w.bytes)
    }

    mutating func item(id: UInt64, text: String = "Milk") {
        var w = WireWriter()
        Item(id: ItemID(id), fields: ItemFields(text: text)).encodeSnapshotRecord(into: &w)
        record(SnapshotRecordType.item.rawValue, w.bytes)
    }

    /// Appends a trailer; `crc` overrides the correct checksum.
    mutating func trailer(lists: UInt64, items: UInt64, crc: UInt32? = nil) {
        var w = WireWriter()
        SnapshotTrailer(listCount: lists, itemCount: items, endLSN: 0, contentBytes: UInt64(bytes.count),
                        crc32: crc ?? CRC32.checksum(bytes)).encode(into: &w)
        record(SnapshotRecordType.trailer.rawValue, w.bytes)
    }

    static func valid() -> RawSnapshot {
        var s = RawSnapshot()
        s.header()
        s.list(id: 1, items: 2)
        s.item(id: 1)
        s.item(id: 2, text: "Eggs")
        s.trailer(lists: 1, items: 2)
        return s
    }
}

@Suite(.timeLimit(.minutes(10))) struct SnapshotErrorTests {
    func readError(_ bytes: [UInt8], limits: SnapshotLimits = .default) -> SnapshotError? {
        let dir = TempDirectory("snap-err")
        defer { dir.remove() }
        let path = dir.file("snapshot-0000000000000000.ckss.gz")
        writeFile(path, bytes)
        let error = readSnapshotError(atPath: path, limits: limits)
        if let error {
            #expect(error.file == path)
            #expect(error.offset != nil)
            #expect(error.description.contains(path))
        }
        return error
    }

    @Test func validRawSnapshotReads() throws {
        #expect(readError(try gzip(RawSnapshot.valid().bytes)) == nil)
    }

    /// Cut at every byte: always TRUNCATED_SNAPSHOT, never a partial success.
    @Test(arguments: [1, 2])
    func truncatedSnapshot(threads: Int) throws {
        let store = SnapshotSamples.store(items: 50)
        var bytes: [UInt8] = []
        let writer = try SnapshotWriter(header: SnapshotSamples.header(for: store),
                                        options: .init(blockBytes: 256, compressionThreads: threads)) { (chunk) throws(SnapshotError) in
            bytes.append(contentsOf: chunk)
        }
        try store.write(to: writer)
        try writer.finish(endLSN: 0)
        #expect(readError(bytes) == nil)
        for cut in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 300)) {
            let error = readError(Array(bytes[..<cut]))
            #expect(error?.code == .truncatedSnapshot, "cut at \(cut) of \(bytes.count): \(String(describing: error))")
        }
    }

    @Test func badContentChecksum() throws {
        var raw = RawSnapshot()
        raw.header()
        raw.list(id: 1, items: 1)
        raw.item(id: 1)
        raw.trailer(lists: 1, items: 1, crc: 0xDEAD_BEEF)
        let error = readError(try gzip(raw.bytes))
        #expect(error?.code == .snapshotChecksum)
        // A byte changed in the content after the trailer was computed.
        var changed = RawSnapshot.valid()
        let at = changed.bytes.firstIndex(of: UInt8(ascii: "M"))!
        changed.bytes[at] = UInt8(ascii: "N")
        #expect(readError(try gzip(changed.bytes))?.code == .snapshotChecksum)
    }

    @Test func wrongTrailerCounts() throws {
        var raw = RawSnapshot()
        raw.header()
        raw.list(id: 1, items: 1)
        raw.item(id: 1)
        raw.trailer(lists: 1, items: 5)
        #expect(readError(try gzip(raw.bytes))?.code == .snapshotChecksum)
    }

    /// A flipped byte in the compressed bytes: zlib or the gzip CRC-32
    /// catches it (or, rarely, our own checks).
    @Test func flippedCompressedByte() throws {
        let good = try gzip(RawSnapshot.valid().bytes, level: 0)
        // Byte 10 starts the stored block; its bits 3-7 are padding zlib ignores.
        for at in stride(from: 11, to: good.count, by: 3) {
            var bad = good
            bad[at] ^= 0x10
            let error = readError(bad)
            #expect(error != nil, "flip at \(at) went unnoticed")
        }
    }

    /// A small file that inflates by far more than any real snapshot:
    /// refused once past the grace size, long before it is all inflated.
    @Test func gzipBombIsRefused() throws {
        var raw = RawSnapshot()
        raw.header()
        let padding = [UInt8](repeating: 0, count: (1 << 20) - 16)
        for _ in 0..<160 { raw.record(0x40, padding) } // skippable extension records
        raw.trailer(lists: 0, items: 0)
        let bomb = try gzip(raw.bytes, level: 9)
        #expect(bomb.count < 400_000)
        let error = readError(bomb)
        #expect(error?.code == .decompressionLimit)
        #expect(error?.offset ?? .max < 80 << 20)
        // Within a higher ratio limit the same file is valid.
        #expect(readError(bomb, limits: SnapshotLimits(maxRatio: 2000)) == nil)
        // And the absolute limit holds too.
        #expect(readError(bomb, limits: SnapshotLimits(maxRawBytes: 10 << 20, maxRatio: 2000))?.code == .decompressionLimit)
    }

    @Test func zerosAreNotASnapshot() throws {
        let zeros = try gzip([UInt8](repeating: 0, count: 8 << 20), level: 9)
        #expect(readError(zeros)?.code == .corruptSnapshot)
    }

    @Test func oversizedRecord() throws {
        var raw = RawSnapshot()
        raw.header()
        raw.bytes += [SnapshotRecordType.list.rawValue, 0x80, 0x80, 0x80, 0x01] // length 2 MiB
        #expect(readError(try gzip(raw.bytes))?.code == .recordTooLarge)
    }

    @Test func notGzip() {
        var rng = SplitMix64(seed: 1)
        #expect(readError((0..<1000).map { _ in UInt8(truncatingIfNeeded: rng.next()) })?.code == .corruptSnapshot)
        #expect(readError([])?.code == .truncatedSnapshot)
    }

    @Test func garbageAfterTheGzipStream() throws {
        #expect(readError(try gzip(RawSnapshot.valid().bytes) + [0x00, 0x01, 0x02, 0x03])?.code == .corruptSnapshot)
    }

    @Test func recordsAfterTheTrailer() throws {
        var raw = RawSnapshot.valid()
        raw.list(id: 9, items: 0)
        #expect(readError(try gzip(raw.bytes))?.code == .corruptSnapshot)
    }

    @Test func unknownVersion() throws {
        var raw = RawSnapshot.valid()
        raw.bytes[9] = 2
        let error = readError(try gzip(raw.bytes))
        #expect(error?.code == .unsupportedVersion)
        #expect(error?.offset == 8)
    }

    @Test func structuralErrors() throws {
        var missingItem = RawSnapshot()
        missingItem.header()
        missingItem.list(id: 1, items: 2)
        missingItem.item(id: 1)
        missingItem.trailer(lists: 1, items: 1)
        #expect(readError(try gzip(missingItem.bytes))?.code == .corruptSnapshot)

        var descending = RawSnapshot()
        descending.header()
        descending.list(id: 2, items: 0)
        descending.list(id: 1, items: 0)
        descending.trailer(lists: 2, items: 0)
        #expect(readError(try gzip(descending.bytes))?.code == .corruptSnapshot)

        var noHeader = RawSnapshot()
        noHeader.list(id: 1, items: 0)
        #expect(readError(try gzip(noHeader.bytes))?.code == .corruptSnapshot)

        var unknown = RawSnapshot()
        unknown.header()
        unknown.record(0x20, [1, 2, 3])
        #expect(readError(try gzip(unknown.bytes))?.code == .corruptSnapshot)

        var badItem = RawSnapshot()
        badItem.header()
        badItem.list(id: 1, items: 1)
        badItem.record(SnapshotRecordType.item.rawValue, [0x01, 0xF0, 0x00]) // unknown flag bits
        #expect(readError(try gzip(badItem.bytes))?.code == .corruptSnapshot)
    }

    /// Extension records (0x40-0x7F) are skipped; other fields a later
    /// version appends to a known record are ignored.
    @Test func forwardCompatibleRecords() throws {
        var raw = RawSnapshot()
        raw.header()
        raw.record(0x41, [9, 9, 9])
        raw.list(id: 1, items: 1)
        var w = WireWriter()
        Item(id: ItemID(1), fields: ItemFields(text: "x")).encodeSnapshotRecord(into: &w)
        raw.record(SnapshotRecordType.item.rawValue, w.bytes + [0xAA, 0xBB]) // a future field
        raw.record(0x7F, [])
        raw.trailer(lists: 1, items: 1)
        #expect(readError(try gzip(raw.bytes)) == nil)
    }
}
