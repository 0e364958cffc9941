import ChecklistModel
import ChecklistSnapshot
import ChecklistSnapshotFixtures
import Foundation
import Testing

@Suite(.timeLimit(.minutes(10))) struct SnapshotRoundTripTests {
    func writeToMemory(_ store: FakeStore, options: SnapshotWriter.Options = .init()) throws -> ([UInt8], SnapshotWriter.Summary) {
        var out: [UInt8] = []
        let writer = try SnapshotWriter(header: SnapshotSamples.header(for: store), options: options) { (chunk) throws(SnapshotError) in
            precondition(chunk.count <= 64 * 1024 || options.compressionThreads > 1)
            out.append(contentsOf: chunk)
        }
        try store.write(to: writer)
        let summary = try writer.finish(endLSN: 77)
        return (out, summary)
    }

    func readFromMemory(_ bytes: [UInt8], limits: SnapshotLimits = .default) throws -> (FakeStore, SnapshotHeader, SnapshotTrailer) {
        var offset = 0
        let reader = try SnapshotReader(name: "memory", limits: limits) { (buffer) throws(SnapshotError) -> Int in
            let n = min(buffer.count, bytes.count - offset)
            bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + n)])) }
            offset += n
            return n
        }
        let store = FakeStore()
        let trailer = try reader.readAll(into: store)
        return (store, reader.header, trailer)
    }

    @Test(arguments: [SnapshotWriter.Options(), .init(level: 9, compressionThreads: 1), .init(level: 0, blockBytes: 4096, compressionThreads: 1),
                      .init(blockBytes: 8 * 1024, compressionThreads: 2), .init(level: 6, blockBytes: 4096, compressionThreads: 3)])
    func roundTrip(options: SnapshotWriter.Options) throws {
        let store = SnapshotSamples.store()
        let (bytes, summary) = try writeToMemory(store, options: options)
        let (copy, header, trailer) = try readFromMemory(bytes)
        #expect(copy.lists == store.lists)
        #expect(copy.nextListID == store.nextListID)
        #expect(header == SnapshotSamples.header(for: store))
        #expect(trailer == summary.trailer)
        #expect(trailer.endLSN == 77)
        #expect(trailer.listCount == UInt64(store.lists.count))
        #expect(trailer.itemCount == UInt64(store.itemCount))
        #expect(summary.compressedBytes == UInt64(bytes.count))
        #expect(bytes[0] == 0x1F && bytes[1] == 0x8B) // gzip
    }

    @Test func emptySnapshot() throws {
        let (bytes, summary) = try writeToMemory(FakeStore())
        let (copy, _, trailer) = try readFromMemory(bytes)
        #expect(copy.lists.isEmpty)
        #expect(trailer.listCount == 0 && trailer.itemCount == 0)
        #expect(summary.rawBytes > trailer.contentBytes)
    }

    /// The push decoder gives the same records whatever the chunking,
    /// down to one byte at a time.
    @Test(arguments: [1, 7, 4096])
    func decoderAcceptsAnyChunking(chunk: Int) throws {
        let store = SnapshotSamples.store(items: 300)
        let (bytes, _) = try writeToMemory(store, options: .init(blockBytes: 2048, compressionThreads: 2))
        let decoder = try SnapshotDecoder(name: "chunks")
        var offset = 0
        var lists = 0, items = 0
        var sawEnd = false
        loop: while true {
            switch try decoder.next() {
            case .needInput:
                if offset == bytes.count { decoder.endInput(); continue }
                let n = min(chunk, bytes.count - offset)
                let taken = bytes.withUnsafeBytes { decoder.feed(UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + n)])) }
                offset += taken
            case .header: break
            case .list: lists += 1
            case .item: items += 1
            case .idempotency: Issue.record("no IDEMPOTENCY record was written")
            case .end:
                sawEnd = true
                break loop
            }
        }
        #expect(sawEnd)
        #expect(lists == store.lists.count)
        #expect(items == store.itemCount)
    }

    @Test func fileRoundTripIsAcceptedByGzip() throws {
        let dir = TempDirectory("gzip")
        defer { dir.remove() }
        let store = SnapshotSamples.store()
        for threads in [1, 2] {
            let path = dir.file("export-\(threads).ckss.gz")
            let writer = try SnapshotWriter(path: path, header: SnapshotSamples.header(for: store),
                                            options: .init(blockBytes: 16 * 1024, compressionThreads: threads))
            try store.write(to: writer)
            let summary = try writer.finish(endLSN: 0)
            let reader = try SnapshotReader(path: path)
            let copy = FakeStore()
            _ = try reader.readAll(into: copy)
            #expect(copy.lists == store.lists)

            guard FileManager.default.isExecutableFile(atPath: "/bin/gzip") else { continue }
            #expect(try run("/bin/gzip", ["-t", path]).status == 0)
            let inflated = try run("/bin/gzip", ["-dc", path])
            #expect(inflated.status == 0)
            #expect(UInt64(inflated.output.count) == summary.rawBytes)
            #expect(Array(inflated.output.prefix(8)) == SnapshotFormat.magic)
            #expect(CRC32.checksum(Array(inflated.output.prefix(Int(summary.trailer.contentBytes)))) == summary.trailer.crc32)
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/zcat") || FileManager.default.isExecutableFile(atPath: "/bin/zcat") {
                let zcat = FileManager.default.isExecutableFile(atPath: "/bin/zcat") ? "/bin/zcat" : "/usr/bin/zcat"
                #expect(try run(zcat, [path]).output == inflated.output)
            }
        }
    }

    /// A snapshot gzip wrote (single member, default level) reads back.
    @Test func readsWhatGzipCompressed() throws {
        guard FileManager.default.isExecutableFile(atPath: "/bin/gzip") else { return }
        let dir = TempDirectory("gzip-in")
        defer { dir.remove() }
        let store = SnapshotSamples.store(items: 500)
        let (bytes, _) = try writeToMemory(store)
        let raw = try run("/bin/gzip", ["-dc"], input: bytes).output
        writeFile(dir.file("raw"), raw)
        let recompressed = try run("/bin/gzip", ["-9c", dir.file("raw")]).output
        let (copy, _, _) = try readFromMemory(recompressed)
        #expect(copy.lists == store.lists)
    }

    @Test func writerRefusesMisuse() throws {
        let writer = try SnapshotWriter(header: SnapshotSamples.header(for: FakeStore())) { (_) throws(SnapshotError) in }
        let list = SnapshotList(namespace: .default, id: ListID(5), name: "A", icon: "", revision: 1, nextItemID: ItemID(1), itemCount: 1)
        #expect { try writer.writeItem(Item(id: ItemID(1), fields: ItemFields(text: "x"))) } throws: { ($0 as? SnapshotError)?.code == .misuse }
        try writer.writeList(list)
        #expect { try writer.writeList(list) } throws: { ($0 as? SnapshotError)?.code == .misuse }
        #expect { try writer.finish(endLSN: 0) } throws: { ($0 as? SnapshotError)?.code == .misuse }
        try writer.writeItem(Item(id: ItemID(1), fields: ItemFields(text: "x")))
        var lower = list
        lower.id = ListID(4)
        lower.itemCount = 0
        #expect { try writer.writeList(lower) } throws: { ($0 as? SnapshotError)?.code == .misuse }
        try writer.finish(endLSN: 0)
        #expect { try writer.finish(endLSN: 0) } throws: { ($0 as? SnapshotError)?.code == .misuse }
    }
}
