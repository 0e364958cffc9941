import ChecklistClient
import ChecklistModel
import ChecklistSnapshot
import ChecklistTesting
import ChecklistWire
import Foundation
import Testing

/// EXPORT and IMPORT (Protocol/SPEC.md sections 6.16-6.17) against the real
/// server: round trips, atomicity, the documented errors of bad uploads,
/// and the server going on serving after each.
@Suite(.timeLimit(.minutes(10))) struct SnapshotTransferTests {
    /// Everything a client can read of its lists: summaries (ids, names,
    /// icons, counts, revisions) and every item in order.
    struct Contents: Equatable, CustomStringConvertible {
        var lists: [ListSummary]
        var items: [ListID: [Item]]
        var description: String { "\(lists.map { "\($0.id) \($0.name) r\($0.revision) \($0.itemCount) items" })" }
    }

    static func contents(_ client: ChecklistConnection) async throws -> Contents {
        let lists = try await client.lists()
        var items: [ListID: [Item]] = [:]
        for list in lists {
            var rows: [Item] = []
            while true {
                let page = try await client.page(list.id, start: .offset(UInt64(rows.count)), limit: 1000)
                rows += page.items
                if !page.hasMore { break }
            }
            items[list.id] = rows
        }
        return Contents(lists: lists, items: items)
    }

    /// Lists with every kind of item field, moved, checked and deleted rows
    /// (so next item ids run ahead of the last id), and a deleted list.
    static func populate(_ client: ChecklistConnection, lists: Int = 4, items: Int = 300) async throws {
        for l in 0..<lists {
            let list = try await client.createList(name: "List \(l) ✓", icon: ["Groceries", "No Icon", "Trips", ""][l % 4])
            var ids: [ItemID] = []
            for batch in stride(from: 0, to: items, by: 100) {
                let ops: [PatchOperation] = (batch..<min(items, batch + 100)).map { i in
                    .insert(tempRef: UInt64(i + 1), position: .end,
                            fields: ItemFields(text: "item \(i) of list \(l) " + String(repeating: "·", count: i % 7), checked: i % 3 == 0,
                                               due: i % 4 == 0 ? 1_700_000_000 + Int64(i) : nil, remind: i % 5 == 0,
                                               price: i % 6 == 0 ? Int64(i * 10) - 500 : nil))
                }
                ids += try await client.patch(list.id, ops: ops).ids.map(\.id)
            }
            try await client.patch(list.id, ops: [.move(.id(ids[1]), toIndex: UInt64(items - 1)), .delete(.id(ids.last!)),
                                                  .toggle(.id(ids[2]))])
            _ = try await client.updateList(list.id, name: "List \(l)")
        }
        let doomed = try await client.createList(name: "Doomed")
        try await client.deleteList(doomed.id)
    }

    static func export(_ client: ChecklistConnection, lists: [ListID] = [], chunkBytes: Int = 0) async throws -> [UInt8] {
        var file: [UInt8] = []
        try await client.exportSnapshot(lists: lists, chunkBytes: chunkBytes, window: 3) { file += $0 }
        return file
    }

    @discardableResult
    static func importFile(_ client: ChecklistConnection, _ file: [UInt8], mode: Import.Mode = .merge,
                           chunkBytes: Int = 1 << 20) async throws -> ImportOK {
        var offset = 0
        return try await client.importSnapshot(mode: mode, chunkBytes: chunkBytes) { count in
            guard offset < file.count else { return nil }
            defer { offset = min(file.count, offset + count) }
            return Array(file[offset..<min(file.count, offset + count)])
        }
    }

    /// A snapshot file made here, list by list.
    static func snapshot(_ lists: [(list: SnapshotList, items: [Item])], level: Int32 = 6) throws -> [UInt8] {
        var out: [UInt8] = []
        let header = SnapshotHeader(createdAt: 0, source: "test", listCount: UInt64(lists.count),
                                    itemCount: UInt64(lists.reduce(0) { $0 + $1.items.count }), startLSN: 0, nextListID: ListID(1))
        let writer = try SnapshotWriter(header: header, options: .init(level: level, compressionThreads: 1)) { out += $0 }
        for (list, items) in lists {
            try writer.writeList(list)
            for item in items { try writer.writeItem(item) }
        }
        try writer.finish(endLSN: 0)
        return out
    }

    static func list(_ id: UInt64, items: [Item], name: String = "L", next: UInt64 = 1000) -> (list: SnapshotList, items: [Item]) {
        (SnapshotList(namespace: .default, id: ListID(id), name: name, icon: "", revision: 3, nextItemID: ItemID(next),
                      itemCount: UInt64(items.count)), items)
    }

    static func serverError(_ body: () async throws -> Void) async -> ChecklistError? {
        do {
            try await body()
        } catch let error as ClientError {
            return error.serverError
        } catch {
            return nil
        }
        return nil
    }

    // MARK: Round trips

    @Test func exportThenImportIntoAnEmptyServerGivesIdenticalLists() async throws {
        let source = try TestServer.start()
        defer { source.stop() }
        let target = try TestServer.start()
        defer { target.stop() }
        let a = try await source.connect()
        let b = try await target.connect()
        try await Self.populate(a)
        let before = try await Self.contents(a)

        // Small chunks: many EXPORT and IMPORT requests, a few in flight.
        let file = try await Self.export(a, chunkBytes: 4096)
        #expect(file.starts(with: [0x1F, 0x8B]))
        let ok = try await Self.importFile(b, file, chunkBytes: 3000)
        #expect(ok.status == .applied && ok.lists == 4 && ok.items == 4 * 299 && ok.renamed.isEmpty)
        let after = try await Self.contents(b)
        #expect(after == before)

        // Both go on alike: the next item id survived, past the deleted item.
        let list = before.lists[2].id
        let insert = PatchOperation.insert(tempRef: 1, position: .index(0), fields: ItemFields(text: "new"))
        let x = try await a.patch(list, ops: [insert])
        let y = try await b.patch(list, ops: [insert])
        #expect(x == y)
        #expect(x.ids.first?.id == ItemID(301))
        await a.close()
        await b.close()
    }

    @Test func selectedListsAndMergeRules() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let client = try await server.connect()
        try await Self.populate(client, lists: 3, items: 20)
        let file = try await Self.export(client, lists: [ListID(2)])
        let missing = await Self.serverError { _ = try await Self.export(client, lists: [ListID(2), ListID(99)]) }
        #expect(missing?.code == .notFound)

        // Merge into the same server: list 2 is ours, so it is replaced and its revision moves on.
        let revision = try await client.lists()[1].revision
        let ok = try await Self.importFile(client, file)
        #expect(ok.lists == 1 && ok.renamed.isEmpty)
        let lists = try await client.lists()
        #expect(lists.map(\.id) == [ListID(1), ListID(2), ListID(3)])
        #expect(lists[1].revision == revision + 1)

        // Replace: only list 2 remains.
        let replaced = try await Self.importFile(client, file, mode: .replace)
        #expect(replaced.deleted == 2)
        #expect(try await client.lists().map(\.id) == [ListID(2)])

        // List 4 was deleted: an import of it gets a new id.
        let four = try Self.snapshot([Self.list(4, items: [])])
        let renamed = try await Self.importFile(client, four)
        #expect(renamed.renamed == [ImportOK.Renamed(from: ListID(4), to: ListID(5))])
        await client.close()
    }

    @Test func exportAndImportRequestsFollowTheirRules() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let client = try await server.connect()
        try await Self.populate(client, lists: 1, items: 5)
        func send(_ request: Request) async throws -> ServerMessage { try await client.send(request) }
        func code(_ answer: ServerMessage) -> ChecklistError.Code? {
            if case .error(let e) = answer { return e.error.code }
            return nil
        }

        guard case .exportChunk(let first) = try await send(.export(Export(.start(chunkBytes: 16, lists: [])))) else {
            Issue.record("START did not answer a chunk")
            return
        }
        #expect(first.sequence == 0 && first.status == .more && first.data.count == 16 && first.itemCount == 4)
        #expect(code(try await send(.export(Export(.start(chunkBytes: 0, lists: []))))) == .badState)
        let wrong = try await send(.export(Export(.next(sequence: 5))))
        #expect(code(wrong) == .badField)
        guard case .exportChunk(let second) = try await send(.export(Export(.next(sequence: 1)))) else {
            Issue.record("NEXT did not answer a chunk")
            return
        }
        #expect(second.sequence == 1)
        guard case .exportChunk(let cancelled) = try await send(.export(Export(.cancel))) else { return }
        #expect(cancelled.status == .cancelled)
        #expect(code(try await send(.export(Export(.next(sequence: 2))))) == .badState)

        #expect(code(try await send(.import(Import(.data(sequence: 1, bytes: [1, 2]))))) == .badState)
        #expect(code(try await send(.import(Import(.end)))) == .badState)
        guard case .importOK(let started) = try await send(.import(Import(.begin(mode: .merge)))) else { return }
        #expect(started.status == .started)
        #expect(code(try await send(.import(Import(.begin(mode: .merge))))) == .badState)
        #expect(code(try await send(.import(Import(.data(sequence: 2, bytes: [1]))))) == .badField)
        guard case .importOK(let gone) = try await send(.import(Import(.cancel))) else { return }
        #expect(gone.status == .cancelled)
        await client.close()
    }

    // MARK: Atomicity and bad uploads

    @Test func oneBadListAppliesNothing() async throws {
        let server = try TestServer.start(["--max-text", "64"])
        defer { server.stop() }
        let client = try await server.connect()
        try await Self.populate(client, lists: 2, items: 10)
        let before = try await Self.contents(client)
        let good = Self.list(1, items: [Item(id: ItemID(1), fields: ItemFields(text: "fine"))], name: "Replacement")
        let long = Self.list(7, items: [Item(id: ItemID(1), fields: ItemFields(text: "ok")),
                                        Item(id: ItemID(2), fields: ItemFields(text: String(repeating: "x", count: 65)))])
        let badID = Self.list(8, items: [Item(id: ItemID(5), fields: ItemFields(text: "id past next"))], next: 5)
        for (bad, code, field) in [(long, ChecklistError.Code.limitExceeded, "text"), (badID, .badField, "id")] {
            for mode in [Import.Mode.merge, .replace] {
                let file = try Self.snapshot([good, bad, Self.list(9, items: [])])
                let error = await Self.serverError { try await Self.importFile(client, file, mode: mode) }
                #expect(error?.code == code)
                #expect(error?.field == field)
                #expect(error?.message.contains("list \(bad.list.id) of the import") == true, "\(String(describing: error))")
                #expect(try await Self.contents(client) == before)
            }
        }
        // The server goes on, and a good import still works.
        try await client.ping()
        try await Self.importFile(client, try Self.snapshot([good]))
        #expect(try await client.lists().first?.name == "Replacement")
        await client.close()
    }

    /// What each damaged upload must give (SPEC.md section 6.17).
    static let damaged: [(name: String, code: ChecklistError.Code, field: String, prefix: String)] = [
        ("truncated", .badField, "data", "TRUNCATED_SNAPSHOT"),
        ("flipped", .badField, "data", "CORRUPT_SNAPSHOT|SNAPSHOT_CHECKSUM"),
        ("not-gzip", .badField, "data", "CORRUPT_SNAPSHOT"),
        ("bad-crc", .badField, "data", "SNAPSHOT_CHECKSUM"),
        ("trailing-bytes", .badField, "data", "CORRUPT_SNAPSHOT"),
        ("bomb", .limitExceeded, "data", "DECOMPRESSION_LIMIT"),
        ("over-limit", .limitExceeded, "data", "DECOMPRESSION_LIMIT"),
    ]

    static func damagedFile(_ name: String) throws -> [UInt8] {
        let items = (1...3000).map { Item(id: ItemID(UInt64($0)), fields: ItemFields(text: "item number \($0) with some text")) }
        let file = try snapshot([list(1, items: items, next: 5000)])
        switch name {
        case "truncated":
            return Array(file.prefix(file.count * 2 / 3))
        case "flipped":
            var bytes = file
            bytes[bytes.count / 2] ^= 0x40
            return bytes
        case "not-gzip":
            // A gzip stream whose content is not a snapshot.
            var out: [UInt8] = []
            let writer = try SnapshotWriter(header: SnapshotHeader(createdAt: 0, source: "", listCount: 0, itemCount: 0,
                                                                  startLSN: 0, nextListID: ListID(1)),
                                            options: .init(compressionThreads: 1)) { out += $0 }
            try writer.finish(endLSN: 0)
            return Array(out.prefix(10)) + Array(repeating: 0x41, count: 100)
        case "bad-crc":
            // Content whose trailer CRC does not match: a snapshot of other content with this trailer.
            var content: [UInt8] = []
            let header = SnapshotHeader(createdAt: 0, source: "test", listCount: 0, itemCount: 0, startLSN: 0, nextListID: ListID(1))
            var out: [UInt8] = []
            let writer = try SnapshotWriter(header: header, options: .init(level: 0, compressionThreads: 1)) { out += $0 }
            try writer.finish(endLSN: 0)
            content = try gunzip(out)
            content[content.count - 1] ^= 0xFF  // the CRC's last byte
            return try gzip(content)
        case "trailing-bytes":
            return file + (try gzip([0x00]))
        case "bomb":
            // Legal records of one repeated text: deflate packs them more than 200:1.
            var out: [UInt8] = []
            let header = SnapshotHeader(createdAt: 0, source: "bomb", listCount: 1, itemCount: 1_000_000, startLSN: 0, nextListID: ListID(2))
            let writer = try SnapshotWriter(header: header, options: .init(level: 9, compressionThreads: 1)) { out += $0 }
            try writer.writeList(SnapshotList(namespace: .default, id: ListID(1), name: "Bomb", icon: "", revision: 1,
                                              nextItemID: ItemID(2_000_000), itemCount: 1_000_000))
            let text = String(repeating: "a", count: 4000)
            for id in 1...12_000 { try writer.writeItem(Item(id: ItemID(UInt64(id)), fields: ItemFields(text: text))) }
            #expect(UInt64(out.count) * 200 < writer.rawBytes, "the bomb compresses only \(writer.rawBytes / UInt64(max(1, out.count))):1")
            return out
        default:  // over-limit: an honest snapshot larger than the server's --max-import-bytes
            return file
        }
    }

    /// Every damaged upload, one after the other on one server (the last on
    /// one started with a small `--max-import-bytes`): each gives its error,
    /// applies nothing, and the server goes on serving.
    @Test func damagedUploadsGiveTheirErrorAndApplyNothing() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let small = try TestServer.start(["--max-import-bytes", "65536"])
        defer { small.stop() }
        for expected in Self.damaged {
            let target = expected.name == "over-limit" ? small : server
            let client = try await target.connect()
            if try await client.lists().isEmpty { try await Self.populate(client, lists: 1, items: 10) }
            let before = try await Self.contents(client)
            let file = try Self.damagedFile(expected.name)
            let error = await Self.serverError { try await Self.importFile(client, file, chunkBytes: 32 * 1024) }
            #expect(error?.code == expected.code, "\(expected.name): \(String(describing: error))")
            #expect(error?.field == expected.field, "\(expected.name)")
            let prefixes = expected.prefix.split(separator: "|").map(String.init)
            #expect(prefixes.contains { error?.message.hasPrefix($0) == true }, "\(expected.name): \(String(describing: error))")
            // Nothing applied; this connection and a new one are served.
            #expect(try await Self.contents(client) == before, "\(expected.name)")
            try await client.ping()
            let other = try await target.connect()
            #expect(try await other.lists() == before.lists)
            await other.close()
            await client.close()
        }
    }

    @Test func importsAreLimitedServerWide() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        var clients: [ChecklistConnection] = []
        for _ in 0..<3 { clients.append(try await server.connect()) }
        for client in clients.prefix(2) {
            guard case .importOK = try await client.send(.import(Import(.begin(mode: .merge)))) else {
                Issue.record("BEGIN was refused")
                return
            }
        }
        guard case .error(let refused) = try await clients[2].send(.import(Import(.begin(mode: .merge)))) else {
            Issue.record("a third import was accepted")
            return
        }
        #expect(refused.error.code == .overloaded)
        // CANCEL frees a place at once.
        _ = try await clients[0].send(.import(Import(.cancel)))
        guard case .importOK(let ok) = try await clients[2].send(.import(Import(.begin(mode: .merge)))) else {
            Issue.record("BEGIN after a CANCEL was refused")
            return
        }
        #expect(ok.status == .started)
        // So does closing the connection, once the server has seen the close
        // (on its own loop: ask again, a bounded number of times).
        await clients[1].close()
        let fourth = try await server.connect()
        var accepted = false
        for _ in 0..<10_000 where !accepted {
            if case .importOK = try await fourth.send(.import(Import(.begin(mode: .merge)))) { accepted = true }
        }
        #expect(accepted)
        await fourth.close()
        await clients[0].close()
        await clients[2].close()
    }

    @Test func anImportSurvivesACrash() async throws {
        let server = try TestServer.start(["--fsync", "always"])
        let directory = server.directory
        defer { directory.remove() }
        let client = try await server.connect()
        let items = (1...2000).map { Item(id: ItemID(UInt64($0)), fields: ItemFields(text: "kept \($0)", checked: $0 % 2 == 0)) }
        try await Self.importFile(client, try Self.snapshot([Self.list(3, items: items, next: 5000), Self.list(6, items: [])]))
        let before = try await Self.contents(client)
        await client.close()
        server.crash()

        let restarted = try TestServer.start(["--fsync", "always"], directory: directory)
        defer { _ = restarted.process.stop() }
        let again = try await restarted.connect()
        #expect(try await Self.contents(again) == before)
        await again.close()
    }
}

/// gzip of `bytes` (one member) and back, with the system's gzip.
func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
    try rawOutput("gzip", ["-c", "-n"], bytes)
}

func gunzip(_ bytes: [UInt8]) throws -> [UInt8] {
    try rawOutput("gzip", ["-d", "-c"], bytes)
}

/// Runs a tool with `input` on stdin and returns its stdout bytes (through a temporary file).
private func rawOutput(_ tool: String, _ arguments: [String], _ input: [UInt8]) throws -> [UInt8] {
    let directory = try TemporaryDirectory(prefix: "gzip")
    defer { directory.remove() }
    let inputPath = directory.appending("in")
    let outputPath = directory.appending("out")
    try Data(input).write(to: URL(fileURLWithPath: inputPath))
    let result = try ProcessRunner.run(executable: "/bin/sh", arguments: ["-c", "\(tool) \(arguments.joined(separator: " ")) < \(inputPath) > \(outputPath)"],
                                       timeout: .seconds(30))
    guard result.status == 0 else { throw TestFailure("\(tool) failed: \(result.stderr)") }
    return Array(try Data(contentsOf: URL(fileURLWithPath: outputPath)))
}
