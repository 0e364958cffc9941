import ChecklistClient
import ChecklistModel
import ChecklistTesting
import Foundation
import Testing

/// `checklistd --postgres` on this run's private cluster: what only the
/// PostgreSQL store has to show (the tests run against both stores live in
/// their own suites, parameterised by `TestStore`).
@Suite(.enabled(if: PostgresCluster.binariesFound, "no PostgreSQL binaries (Debian package postgresql): skipped"),
       .timeLimit(.minutes(10)))
struct PostgresStoreTests {
    @Test func aRestartKeepsListsItemsAndTheChangeFeed() async throws {
        let first = try TestServer.start(store: .postgres)
        let client = try await first.connect()
        let list = try await client.createList(name: "Groceries", icon: "Groceries")
        let inserted = try await client.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "milk")),
                                                             .insert(tempRef: nil, position: .end, fields: ItemFields(text: "eggs"))])
        let milk = try #require(try await client.page(list.id, limit: 1).items.first)
        _ = try await client.patch(list.id, baseRevision: inserted.revision, ops: [.toggle(.id(milk.id))])
        await client.close()
        #expect(first.process.stop() == .exited(0))

        let second = try TestServer.start(store: .postgres, postgres: first.postgres)
        defer { second.stop() }
        #expect(second.process.waitForStandardError(containing: "event=postgres_loaded"))  // stderr is read by its own thread
        let again = try await second.connect()
        let lists = try await again.lists()
        #expect(lists.map(\.name) == ["Groceries"])
        #expect(lists.first?.revision == inserted.revision + 1)
        #expect(lists.first?.uncheckedCount == 1)
        let page = try await again.page(list.id, limit: 10)
        #expect(page.items.map(\.text) == ["milk", "eggs"])
        #expect(page.items.map(\.checked) == [true, false])
        // The change feed reaches back past the restart.
        let feed = try await again.changes(of: list.id, since: list.revision)
        #expect(feed.changes.count == 2)
        #expect(feed.revision == inserted.revision + 1)
        // Ids go on from the stored counter.
        let more = try await again.patch(list.id, ops: [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "tea"))])
        let highest = try #require(page.items.map(\.id.rawValue).max())
        #expect(more.ids.first.map { $0.id.rawValue > highest } == true)
        await again.close()
    }

    @Test func aHostileListNameIsJustAName() async throws {
        let hostile = "'); DROP TABLE lists; --"
        let first = try TestServer.start(store: .postgres)
        let client = try await first.connect()
        let list = try await client.createList(name: hostile, icon: "\"; DELETE FROM changes; --")
        _ = try await client.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "'||pg_sleep(5)||'"))])
        await client.close()
        _ = first.process.stop()

        let second = try TestServer.start(store: .postgres, postgres: first.postgres)
        defer { second.stop() }
        let again = try await second.connect()
        let lists = try await again.lists()
        #expect(lists.map(\.name) == [hostile])
        #expect(lists.map(\.icon) == ["\"; DELETE FROM changes; --"])
        #expect(try await again.page(list.id, limit: 10).items.map(\.text) == ["'||pg_sleep(5)||'"])
        await again.close()
        let database = try #require(first.postgres?.split(separator: "=").last.map(String.init))
        let psql = try PostgresCluster.shared().runClient("psql", ["-At", "-d", database, "-c", "SELECT name FROM lists"])
        #expect(psql.stdout == hostile + "\n", "\(psql.stderr)")
    }

    @Test func unreachableAtStartExitsWithStatus3() throws {
        let result = try ProcessRunner.run(executable: try ProductLocator.path(of: "checklistd"), arguments: [
            "--port", "0", "--postgres", "host=127.0.0.1 port=1 user=postgres dbname=none connect_timeout=5"], timeout: .seconds(60))
        #expect(result.status == 3, "\(result.stderr)")
        #expect(result.stderr.contains("checklistd: cannot reach PostgreSQL:"), "\(result.stderr)")
    }

    @Test func dataDirTogetherWithPostgresIsAUsageError() throws {
        let result = try ProcessRunner.run(executable: try ProductLocator.path(of: "checklistd"), arguments: [
            "--data-dir", "/nonexistent", "--postgres", "host=127.0.0.1"], timeout: .seconds(60))
        #expect(result.status == 2)
        #expect(result.stderr.contains("--data-dir and --postgres"))
    }

    /// The backends are killed (pg_terminate_backend) under four writers:
    /// the batch in flight fails, none of its patches is acknowledged (they
    /// are answered ERROR UNAVAILABLE, outcome unknown), the node logs the loss and its reconnection, takes
    /// writes again, and after a restart every acknowledged patch is there
    /// exactly once.
    @Test func killedBackendsFailTheBatchInFlightAndTheNodeReconnects() async throws {
        let server = try TestServer.start(store: .postgres)
        let setup = try await server.connect()
        let list = try await setup.createList(name: "Killed", icon: "Inbox").id
        await setup.close()
        let acknowledged = Acknowledged()
        let writers = (0..<4).map { w in
            Task {
                guard let client = try? await server.connect(name: "writer-\(w)") else { return acknowledged.writerStopped() }
                var n = w
                while !Task.isCancelled {
                    do {
                        _ = try await client.patch(list, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "p\(n)"))])
                    } catch {
                        acknowledged.writerStopped()
                        break
                    }
                    acknowledged.insert(n)
                    n += 4
                }
                await client.close()
            }
        }
        #expect(await acknowledged.wait(forCount: 50, unlessMoreStoppedThan: 0))
        let database = try #require(server.postgres?.split(separator: "=").last.map(String.init))
        let killed = try PostgresCluster.shared().runClient("psql", ["-At", "-d", "postgres", "-c",
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '\(database)'"])
        #expect(killed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) != "0", "\(killed.stderr)")
        #expect(server.process.waitForStandardError(containing: "event=postgres_lost", timeout: .seconds(30)))
        #expect(server.process.waitForStandardError(containing: "event=postgres_reconnected", timeout: .seconds(30)))
        for writer in writers { writer.cancel() }
        for writer in writers { await writer.value }
        #expect(acknowledged.stoppedWriters >= 1, "the failed batch stopped no writer (none got an error)")

        let after = try await server.connect()
        _ = try await after.patch(list, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "after"))])
        await after.close()
        let counts = try await server.restartedTextCounts(of: list)
        #expect(counts.values.allSatisfy { $0 == 1 }, "a patch was applied twice")
        #expect(counts["after"] == 1)
        let missing = acknowledged.all.filter { counts["p\($0)"] == nil }
        #expect(missing.isEmpty, "acknowledged patches lost: \(missing.sorted().prefix(10))")
    }

    /// The connection is lost wherever the committer is: in a transaction,
    /// waiting for work, or telling the other nodes after a commit (where
    /// it has no batch in hand, only commits queued behind). Every patch
    /// queued by then is answered, acknowledged or `UNAVAILABLE`, while the
    /// database stays away, never held until it is back. Each round kills
    /// the node's backends once under four writers, at whatever point the
    /// committer is.
    @Test func everyPatchQueuedWhenTheConnectionIsLostIsAnsweredWhileTheDatabaseIsAway() async throws {
        let server = try TestServer.start(store: .postgres)
        defer { server.stop() }
        let setup = try await server.connect()
        let list = try await setup.createList(name: "Lost", icon: "Inbox").id
        await setup.close()
        let database = try #require(server.postgres?.split(separator: "=").last.map(String.init))
        let cluster = try PostgresCluster.shared()
        func psql(_ sql: String) throws {
            let result = try cluster.runClient("psql", ["-At", "-d", "postgres", "-c", sql])
            #expect(result.status == 0, "\(result.stderr)")
        }
        for round in 0..<6 {
            let acknowledged = Acknowledged()
            let writers = (0..<4).map { w in
                Task { () -> String in
                    // A patch held until the database is back fails the round by this limit.
                    guard let client = try? await server.connect(name: "writer-\(w)", requestTimeout: .seconds(15)) else {
                        acknowledged.writerStopped()
                        return "no connection"
                    }
                    var n = w
                    var end: String?
                    while end == nil {
                        do {
                            _ = try await client.patch(list, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "r\(round)-\(n)"))])
                            acknowledged.insert(n)
                            n += 4
                        } catch let error as ClientError where error.serverError?.code == .unavailable {
                            end = "UNAVAILABLE"
                        } catch {
                            end = "\(error)"
                        }
                    }
                    acknowledged.writerStopped()
                    await client.close()
                    return end!
                }
            }
            #expect(await acknowledged.wait(forCount: 20, unlessMoreStoppedThan: 0), "round \(round): writes before the loss")
            let logOffset = server.process.standardErrorCount
            try psql("ALTER DATABASE \(database) ALLOW_CONNECTIONS false")
            try psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(database)'")
            var ends: [String] = []
            for writer in writers { ends.append(await writer.value) }
            #expect(ends.allSatisfy { $0 == "UNAVAILABLE" }, "round \(round): each writer's last patch: \(ends)")
            try psql("ALTER DATABASE \(database) ALLOW_CONNECTIONS true")
            #expect(server.process.waitForStandardError(containing: "event=postgres_reconnected", after: logOffset, timeout: .seconds(30)),
                    "round \(round)")
        }
    }

    /// The database refuses the node (connections not allowed, backends
    /// killed): the batch in flight fails, then changes are answered
    /// `UNAVAILABLE` with nothing applied while reads of cached lists go
    /// on, except of the list whose change is undecided (a page is what is
    /// committed at its revision); once the database lets it in again the
    /// node reconnects, commits the kept batch and takes changes.
    @Test func whileTheDatabaseIsAwayChangesAreUnavailableAndReadsGoOn() async throws {
        let server = try TestServer.start(store: .postgres)
        defer { server.stop() }
        let client = try await server.connect()
        let list = try await client.createList(name: "Away", icon: "Inbox")
        _ = try await client.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "kept"))])
        let other = try await client.createList(name: "Other", icon: "Inbox")
        _ = try await client.patch(other.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "other"))])
        let database = try #require(server.postgres?.split(separator: "=").last.map(String.init))
        let cluster = try PostgresCluster.shared()
        func psql(_ sql: String) throws {
            let result = try cluster.runClient("psql", ["-At", "-d", "postgres", "-c", sql])
            #expect(result.status == 0, "\(result.stderr)")
        }
        try psql("ALTER DATABASE \(database) ALLOW_CONNECTIONS false")
        try psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(database)'")
        // The next commit finds the connection gone: that patch is not acknowledged.
        let failing = try await server.connect(name: "loses-its-batch")
        await #expect(throws: ClientError.self) {
            _ = try await failing.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "lost"))])
        }
        await failing.close()
        #expect(server.process.waitForStandardError(containing: "event=postgres_lost", timeout: .seconds(30)))

        do {
            _ = try await client.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "refused"))])
            Issue.record("a patch was acknowledged while the database was away")
        } catch let error as ClientError {
            #expect(error.serverError?.code == .unavailable, "\(error)")
        }
        #expect(try await client.page(other.id, limit: 10).items.map(\.text) == ["other"])
        try await expectRefused("a page showing an undecided change") { try await client.page(list.id, limit: 10).items.map(\.text) }

        try psql("ALTER DATABASE \(database) ALLOW_CONNECTIONS true")
        #expect(server.process.waitForStandardError(containing: "event=postgres_reconnected", timeout: .seconds(30)))
        _ = try await client.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "back"))])
        let texts = try await client.page(list.id, limit: 10).items.map(\.text)
        #expect(texts.first == "kept" && texts.last == "back" && !texts.contains("refused"), "\(texts)")
        await client.close()
    }

    /// `checklistd export --postgres` of one database, `import --postgres`
    /// into another (one transaction), and a server on the second serves it.
    @Test func offlineExportAndImportWithPostgres() async throws {
        let source = try TestServer.start(store: .postgres)
        let client = try await source.connect()
        let list = try await client.createList(name: "Moved", icon: "Inbox")
        _ = try await client.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "one")),
                                                  .insert(tempRef: nil, position: .end, fields: ItemFields(text: "two"))])
        await client.close()
        _ = source.process.stop()
        let directory = try TemporaryDirectory(prefix: "checklistd-pg-transfer")
        defer { directory.remove() }
        let file = directory.appending("store.ckss.gz")
        let checklistd = try ProductLocator.path(of: "checklistd")
        let exported = try ProcessRunner.run(executable: checklistd, arguments: ["export", "--postgres", try #require(source.postgres), file],
                                             timeout: .seconds(60))
        #expect(exported.status == 0, "\(exported.stderr)")
        let target = try PostgresCluster.freshSharedDatabase(prefix: "checklistd_import")
        let imported = try ProcessRunner.run(executable: checklistd, arguments: ["import", "--postgres", target, file],
                                             timeout: .seconds(60))
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("imported 1 lists, 2 items"), "\(imported.stdout)")

        let server = try TestServer.start(store: .postgres, postgres: target)
        defer { server.stop() }
        let again = try await server.connect()
        #expect(try await again.lists().map(\.name) == ["Moved"])
        #expect(try await again.page(list.id, limit: 10).items.map(\.text) == ["one", "two"])
        await again.close()
    }
}
