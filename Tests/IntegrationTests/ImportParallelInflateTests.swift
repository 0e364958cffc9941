import ChecklistClient
import ChecklistModel
import ChecklistSnapshot
import ChecklistWire
import Foundation
import Testing

/// IMPORT with its gzip members inflated on the server's inflate workers
/// (`--import-inflate-threads`, on by default) against one stream
/// (`--import-inflate-threads 0`): the same lists, the same errors, nothing
/// applied from a damaged or cut upload.
@Suite(.timeLimit(.minutes(10))) struct ImportParallelInflateTests {
    typealias T = SnapshotTransferTests

    /// Three lists in members of about 100 kB (stored: each member is one
    /// piece the workers inflate), cut inside records.
    static func multiMemberFile() throws -> [UInt8] {
        var lists: [(list: SnapshotList, items: [Item])] = []
        for l in 1...3 {
            let items = (1...6000).map { i in
                Item(id: ItemID(UInt64(i)), fields: ItemFields(text: "list \(l) item \(i) " + String(repeating: "x", count: i % 40),
                                                               checked: i % 3 == 0, due: i % 4 == 0 ? Int64(i) : nil,
                                                               remind: i % 5 == 0, price: i % 7 == 0 ? Int64(-i) : nil))
            }
            lists.append(T.list(UInt64(l), items: items, name: "Parallel \(l)", next: 7000))
        }
        var out: [UInt8] = []
        let header = SnapshotHeader(createdAt: 0, source: "test", listCount: 3, itemCount: 18_000, startLSN: 0, nextListID: ListID(1))
        let writer = try SnapshotWriter(header: header, options: .init(level: 0, blockBytes: 100_000, compressionThreads: 2)) { out += $0 }
        for (list, items) in lists {
            try writer.writeList(list)
            for item in items { try writer.writeItem(item) }
        }
        try writer.finish(endLSN: 0)
        // Every member starts with the same 8 bytes (ParallelGzipInflater.memberStart).
        let start: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00]
        #expect((0..<(out.count - 8)).filter { out[$0] == 0x1F && Array(out[$0..<($0 + 8)]) == start }.count > 4)
        return out
    }

    @Test func parallelAndSerialInflationGiveIdenticalStores() async throws {
        let serial = try TestServer.start(["--import-inflate-threads", "0"])
        defer { serial.stop() }
        let parallel = try TestServer.start(["--import-inflate-threads", "3"])
        defer { parallel.stop() }
        let file = try Self.multiMemberFile()
        var contents: [T.Contents] = []
        for server in [serial, parallel] {
            let client = try await server.connect()
            let ok = try await T.importFile(client, file, mode: .replace, chunkBytes: 150_000)
            #expect(ok.items == 18_000 && ok.lists == 3)
            contents.append(try await T.contents(client))
            await client.close()
        }
        #expect(contents[0] == contents[1])
        #expect(contents[1].items.values.map(\.count).reduce(0, +) == 18_000)
    }

    @Test func aCorruptOrCutUploadLeavesTheStoreUntouched() async throws {
        let server = try TestServer.start(["--import-inflate-threads", "3"])
        defer { server.stop() }
        let client = try await server.connect()
        try await T.populate(client, lists: 2, items: 50)
        let before = try await T.contents(client)
        let file = try Self.multiMemberFile()
        var corrupt = file
        corrupt[file.count / 2] ^= 0x55
        let cases: [(bytes: [UInt8], prefixes: [String])] = [
            (Array(file.prefix(file.count / 2)), ["TRUNCATED_SNAPSHOT"]),
            (Array(file.prefix(file.count - 3)), ["TRUNCATED_SNAPSHOT"]),
            (corrupt, ["CORRUPT_SNAPSHOT", "SNAPSHOT_CHECKSUM"]),
        ]
        for (bytes, prefixes) in cases {
            for mode in [Import.Mode.merge, .replace] {
                let error = await T.serverError { try await T.importFile(client, bytes, mode: mode, chunkBytes: 150_000) }
                #expect(error?.code == .badField && error?.field == "data", "\(String(describing: error))")
                #expect(prefixes.contains { error?.message.hasPrefix($0) == true }, "\(String(describing: error))")
                #expect(try await T.contents(client) == before)
            }
        }
        // The server goes on: this connection, another one, and a good import.
        try await client.ping()
        let other = try await server.connect()
        #expect(try await other.lists() == before.lists)
        await other.close()
        #expect(try await T.importFile(client, file, chunkBytes: 150_000).items == 18_000)
        await client.close()
    }
}
