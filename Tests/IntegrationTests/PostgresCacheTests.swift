import ChecklistClient
import ChecklistModel
import ChecklistPostgres
import ChecklistSocket
import ChecklistTesting
import Foundation
import Synchronization
import Testing

/// `checklistd --postgres --cache-bytes`: a node holds a cache of lists.
/// Every test starts on lists written by an earlier node (so the new one
/// holds their summaries only) with a cache far smaller than the lists.
@Suite(.enabled(if: PostgresCluster.binariesFound, "no PostgreSQL binaries (Debian package postgresql): skipped"),
       .timeLimit(.minutes(10)))
struct PostgresCacheTests {
    static let lists = 12
    static let itemsPerList = 150

    static func text(list: Int, item: Int) -> String {
        "list \(list) item \(item): " + String(repeating: "x", count: 60)
    }

    /// A database with `lists` lists of `itemsPerList` items each (about
    /// 17 KB of estimated memory per list), written by a node that is gone.
    static func storedLists() async throws -> (conninfo: String, ids: [ListID]) {
        let writer = try TestServer.start(store: .postgres)
        let client = try await writer.connect()
        var ids: [ListID] = []
        for list in 0..<lists {
            let summary = try await client.createList(name: "list \(list)", icon: "")
            ids.append(summary.id)
            let ops = (0..<itemsPerList).map { item in
                PatchOperation.insert(tempRef: nil, position: .end, fields: ItemFields(text: text(list: list, item: item)))
            }
            _ = try await client.patch(summary.id, ops: ops)
        }
        await client.close()
        #expect(writer.process.stop() == .exited(0))
        return (try #require(writer.postgres), ids)
    }

    /// A node on `conninfo` with a 32 KiB cache: about two lists' rows.
    static func cachedNode(_ conninfo: String, cacheBytes: String = "32KB") throws -> TestServer {
        try TestServer.start(["--cache-bytes", cacheBytes, "--metrics-port", "0", "--log-level", "debug"],
                             store: .postgres, postgres: conninfo)
    }

    static func allRows(_ client: ChecklistConnection, _ list: ListID, pageRows: Int = 100) async throws -> [String] {
        var texts: [String] = []
        while true {
            let page = try await client.page(list, start: .offset(UInt64(texts.count)), limit: pageRows)
            texts += page.items.map(\.text)
            if page.items.isEmpty || texts.count >= Int(page.total) { return texts }
        }
    }

    static func metric(_ server: TestServer, _ name: String) throws -> UInt64? {
        let line = try #require(server.process.standardOutput.split(separator: "\n").first { $0.contains("metrics on http://") })
        let address = try SocketAddress(parsing: String(line.split(separator: "/")[1]))
        let body = try httpGet(address, path: "/metrics")
        guard let sample = body.split(separator: "\n").first(where: { $0.hasPrefix("checklistd_\(name) ") }) else { return nil }
        return UInt64(sample.split(separator: " ")[1])
    }

    @Test func pagingAcrossEvictedListsReturnsExactlyTheStoredRows() async throws {
        let (conninfo, ids) = try await Self.storedLists()
        let node = try Self.cachedNode(conninfo)
        defer { node.stop() }
        let client = try await node.connect()
        // The summaries are known before any row is loaded.
        let summaries = try await client.lists()
        #expect(summaries.map(\.id) == ids)
        #expect(summaries.allSatisfy { $0.itemCount == UInt64(Self.itemsPerList) })
        #expect(try Self.metric(node, "cache_resident_lists") == 0)
        for round in 0..<2 {
            for (index, id) in ids.enumerated() {
                let rows = try await Self.allRows(client, id)
                #expect(rows == (0..<Self.itemsPerList).map { Self.text(list: index, item: $0) }, "round \(round), list \(index)")
            }
        }
        // Every list was loaded at least twice (evicted in between), and the
        // cache holds only a few of them now.
        let loads = try #require(try Self.metric(node, "cache_loads_total"))
        let evictions = try #require(try Self.metric(node, "cache_evictions_total"))
        #expect(loads >= UInt64(2 * ids.count), "loads \(loads)")
        #expect(evictions >= UInt64(ids.count), "evictions \(evictions)")
        #expect(try #require(try Self.metric(node, "cache_resident_lists")) < UInt64(ids.count))
        #expect(try Self.metric(node, "cache_load_failures_total") == 0)
        #expect(node.process.waitForStandardError(containing: "event=lists_evicted"))
        #expect(node.process.waitForStandardError(containing: "event=list_loaded"))
        await client.close()
    }

    @Test func patchesToEvictedListsAreAppliedAndSurviveARestart() async throws {
        let (conninfo, ids) = try await Self.storedLists()
        let node = try Self.cachedNode(conninfo)
        let client = try await node.connect()
        for round in 0..<2 {
            for id in ids {
                _ = try await client.patch(id, ops: [.insert(tempRef: nil, position: .index(0), fields: ItemFields(text: "new \(round)")),
                                                     .setChecked(.id(ItemID(UInt64(Self.itemsPerList - round))), true)])
            }
        }
        for (index, id) in ids.enumerated() {
            let rows = try await Self.allRows(client, id)
            #expect(rows == ["new 1", "new 0"] + (0..<Self.itemsPerList).map { Self.text(list: index, item: $0) })
        }
        let summaries = try await client.lists()
        #expect(summaries.allSatisfy { $0.revision == 4 && $0.itemCount == UInt64(Self.itemsPerList + 2) })
        #expect(try #require(try Self.metric(node, "cache_evictions_total")) > 0)
        await client.close()
        #expect(node.process.stop() == .exited(0))

        let again = try Self.cachedNode(conninfo)
        defer { again.stop() }
        let reader = try await again.connect()
        for (index, id) in ids.enumerated() {
            let page = try await reader.page(id, limit: 200)
            #expect(page.items.map(\.text) == ["new 1", "new 0"] + (0..<Self.itemsPerList).map { Self.text(list: index, item: $0) })
            #expect(page.items.filter(\.checked).count == 2)
        }
        await reader.close()
    }

    @Test func aListLargerThanTheWholeCacheWorks() async throws {
        let writer = try TestServer.start(store: .postgres)
        let client = try await writer.connect()
        let big = try await client.createList(name: "big", icon: "")
        for batch in 0..<5 {
            let ops = (0..<400).map { PatchOperation.insert(tempRef: nil, position: .end, fields: ItemFields(text: Self.text(list: batch, item: $0))) }
            _ = try await client.patch(big.id, ops: ops)
        }
        await client.close()
        #expect(writer.process.stop() == .exited(0))

        let node = try Self.cachedNode(try #require(writer.postgres), cacheBytes: "16KB")
        defer { node.stop() }
        let reader = try await node.connect()
        let rows = try await Self.allRows(reader, big.id, pageRows: 500)
        #expect(rows == (0..<5).flatMap { batch in (0..<400).map { Self.text(list: batch, item: $0) } })
        let more = try await reader.patch(big.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "last"))])
        #expect(more.revision == 7)
        #expect(try await reader.page(big.id, start: .offset(2000), limit: 10).items.map(\.text) == ["last"])
        // The list was held whole although it is larger than the budget. The
        // once-a-second trim may already have evicted it, now that it is idle:
        // then the eviction counts it.
        let resident = try #require(try Self.metric(node, "cache_resident_bytes"))
        let evictions = try #require(try Self.metric(node, "cache_evictions_total"))
        #expect(resident > 16 << 10 || evictions >= 1, "resident \(resident) B, evictions \(evictions)")
        await reader.close()
    }

    /// The upkeep checkpoints a list the cache holds summary-only: it reads
    /// the list from the database into a store of its own (the list is
    /// never resident here), and a later node loads the same rows.
    @Test func aListHeldSummaryOnlyGetsItsCheckpoint() async throws {
        let writer = try TestServer.start(store: .postgres)
        let client = try await writer.connect()
        let big = try await client.createList(name: "big", icon: "")
        let other = try await client.createList(name: "other", icon: "")
        for batch in 0..<30 {
            let ops = (0..<20).map { PatchOperation.insert(tempRef: nil, position: .end, fields: ItemFields(text: Self.text(list: batch, item: $0))) }
            _ = try await client.patch(big.id, ops: ops)
        }
        await client.close()
        #expect(writer.process.stop() == .exited(0))
        let conninfo = try #require(writer.postgres)

        let node = try TestServer.start(["--cache-bytes", "16KB", "--postgres-checkpoint-after", "20"],
                                        store: .postgres, postgres: conninfo)
        defer { node.stop() }
        let patcher = try await node.connect()
        // Twenty changes to the small list make the upkeep's pass due; the big
        // list, 30 changes after no checkpoint, is named in it.
        for n in 0..<20 {
            _ = try await patcher.patch(other.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "o\(n)"))])
        }
        // The `event=postgres_checkpoint` line of the big list at its last revision.
        #expect(node.process.waitForStandardError(containing: "list=\(big.id.rawValue) revision=31 items=600", timeout: .seconds(60)),
                "\(node.process.standardError)")
        await patcher.close()
        #expect(node.process.stop() == .exited(0))

        let database = try #require(conninfo.split(separator: "=").last.map(String.init))
        let stored = try PostgresCluster.shared().runClient("psql", ["-At", "-F", " ", "-d", database, "-c",
            "SELECT checkpoint_revision, revision FROM lists WHERE id = \(big.id.rawValue)"])
        #expect(stored.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "31 31", "\(stored.stdout)\(stored.stderr)")
        let checker = try Self.cachedNode(conninfo)
        defer { checker.stop() }
        let reader = try await checker.connect()
        #expect(try await Self.allRows(reader, big.id, pageRows: 500) == (0..<30).flatMap { batch in (0..<20).map { Self.text(list: batch, item: $0) } })
        await reader.close()
    }

    /// A request parked on a load that cannot finish (the database's
    /// `changes` table is locked) holds up neither another connection's
    /// reads of a resident list nor that connection's loop.
    @Test func aParkedRequestDoesNotHoldUpReadsOfAResidentList() async throws {
        let (conninfo, ids) = try await Self.storedLists()
        let node = try Self.cachedNode(conninfo, cacheBytes: "1MB")
        defer { node.stop() }
        let reader = try await node.connect()
        let resident = ids[0]
        _ = try await reader.page(resident, limit: 10)  // loaded now
        let blocker = try PostgresConnection(conninfo: conninfo)
        _ = try blocker.execute("BEGIN")
        _ = try blocker.execute("LOCK TABLE changes IN ACCESS EXCLUSIVE MODE")
        let parkedClient = try await node.connect()
        let answered = AnsweredFlag()
        let parked = Task {
            defer { answered.set() }
            return try await parkedClient.page(ids[1], limit: 5).items.map(\.text)
        }
        // Until the server holds the request parked (a condition, not a delay).
        var polls = 0
        while try Self.metric(node, "cache_parked_requests") != 1 {
            polls += 1
            try #require(polls < 10_000, "the request was never parked")
            await Task.yield()
        }
        for _ in 0..<20 {
            #expect(try await reader.page(resident, limit: 10).items.count == 10)
        }
        #expect(try await reader.lists().count == ids.count)
        #expect(!answered.isSet, "the parked request was answered while its load was blocked")
        _ = try blocker.execute("COMMIT")
        #expect(try await parked.value == (0..<5).map { Self.text(list: 1, item: $0) })
        await reader.close()
        await parkedClient.close()
    }

    @Test func cacheBytesWithoutPostgresIsAUsageError() throws {
        let result = try ProcessRunner.run(executable: try ProductLocator.path(of: "checklistd"), arguments: [
            "--cache-bytes", "64MB"], timeout: .seconds(60))
        #expect(result.status == 2)
        #expect(result.stderr.contains("--cache-bytes needs --postgres"), "\(result.stderr)")
    }
}

/// Set once the parked request was answered.
private final class AnsweredFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}
