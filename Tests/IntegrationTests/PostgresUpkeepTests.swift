import ChecklistClient
import ChecklistModel
import ChecklistTesting
import Foundation
import Testing

/// `checklistd --postgres`'s background upkeep: checkpoints written from the
/// cache so a restart replays few changes, and the change feed trimmed to
/// its retention while CHANGES_SINCE within it still answers.
@Suite(.enabled(if: PostgresCluster.binariesFound, "no PostgreSQL binaries (Debian package postgresql): skipped"),
       .timeLimit(.minutes(10)))
struct PostgresUpkeepTests {
    @Test func checkpointsAdvanceAndARestartLoadsFromThemWithTheSameRowsAndFeed() async throws {
        let options = ["--postgres-checkpoint-after", "50", "--retain-changes", "20"]
        let first = try TestServer.start(options, store: .postgres)
        let client = try await first.connect()
        let list = try await client.createList(name: "Upkept", icon: "Inbox")
        var revision = list.revision
        for n in 0..<300 {
            let ops: [PatchOperation] = n % 3 == 2
                ? [.toggle(.id(try #require(try await client.page(list.id, limit: 1).items.first).id))]
                : [.insert(tempRef: nil, position: n % 2 == 0 ? .end : .index(0), fields: ItemFields(text: "item \(n)"))]
            revision = try await client.patch(list.id, ops: ops).revision
        }
        #expect(first.process.waitForStandardError(containing: "event=postgres_checkpoint", timeout: .seconds(60)))
        #expect(first.process.waitForStandardError(containing: "event=postgres_trimmed", timeout: .seconds(60)))
        let before = try await allRows(client, list.id)
        await client.close()
        #expect(first.process.stop() == .exited(0))

        let database = try #require(first.postgres?.split(separator: "=").last.map(String.init))
        let stored = try PostgresCluster.shared().runClient("psql", ["-At", "-F", " ", "-d", database, "-c",
            "SELECT l.checkpoint_revision, l.revision, (SELECT count(*) FROM changes c WHERE c.list_id = l.id) FROM lists l"])
        let figures = stored.stdout.split(whereSeparator: \.isWhitespace).compactMap { UInt64($0) }
        #expect(figures.count == 3, "\(stored.stdout)\(stored.stderr)")
        if figures.count == 3 {
            #expect(figures[0] >= 50, "the checkpoint did not advance")
            #expect(figures[1] == revision)
            #expect(figures[2] < revision, "the change feed was not trimmed")
            // Retained: everything after the checkpoint, and at least the last 20.
            #expect(figures[2] >= min(revision, max(20, revision - figures[0])))
        }

        let second = try TestServer.start(options, store: .postgres, postgres: first.postgres)
        defer { second.stop() }
        #expect(second.process.waitForStandardError(containing: "event=postgres_loaded"))
        let replayed = Self.field("changesReplayed", in: second.process.standardError)
        #expect(replayed.map { $0 < 150 } == true, "replayed \(replayed.map(String.init) ?? "?") of \(revision) changes")
        let again = try await second.connect()
        #expect(try await allRows(again, list.id) == before)
        #expect(try await again.lists().first?.revision == revision)
        // CHANGES_SINCE within the retention answers across the restart.
        let feed = try await again.changes(of: list.id, since: revision - 10)
        #expect(feed.changes.count == 10)
        #expect(feed.revision == revision)
        // Writes go on from the loaded state.
        _ = try await again.patch(list.id, baseRevision: revision, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "after"))])
        await again.close()
    }

    /// Every row of `list` as (id, text, checked), in order.
    private func allRows(_ client: ChecklistConnection, _ list: ListID) async throws -> [String] {
        var rows: [String] = []
        while true {
            let page = try await client.page(list, start: .offset(UInt64(rows.count)), limit: 1000)
            rows += page.items.map { "\($0.id.rawValue) \($0.text) \($0.checked)" }
            if !page.hasMore { return rows }
        }
    }

    /// The integer value of `name=` in the last log line holding it.
    static func field(_ name: String, in log: String) -> Int? {
        guard let line = log.split(separator: "\n").last(where: { $0.contains(" \(name)=") }),
              let range = line.range(of: " \(name)=") else { return nil }
        return Int(line[range.upperBound...].prefix { $0.isNumber })
    }
}
