@testable import ChecklistPostgres
import ChecklistModel
import Foundation
import Synchronization
import Testing

/// `commit(locking:prepare:)`: the lock and the read of the changes after
/// the bases in one flight, the writes and COMMIT in another.
@Suite(.enabled(if: TestCluster.binariesFound, TestCluster.skipReason), .timeLimit(.minutes(2)))
struct CommitLockTests {
    /// Node B holds list 1's row lock (inside its own `prepare`) while
    /// node A's first flight waits on it; B commits a change; A's read,
    /// the second statement of the same flight, sees that change: in READ
    /// COMMITTED it takes its snapshot after the lock returned.
    @Test func theReadInTheLockFlightSeesTheCommitTheLockWaitedFor() throws {
        let (store, conninfo) = try TestCluster.freshStore()
        try store.commit([Fixture.create(1)])
        let nodeB = PostgresStore(connection: try PostgresConnection(conninfo: conninfo))
        let watcher = try PostgresConnection(conninfo: conninfo)
        let seen = Mutex<LockedLists?>(nil)
        let failure = Mutex<String?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let nodeAPID = Mutex<Int32>(0)
        try nodeB.commit(locking: [(ListID(1), 1)]) { locked in
            #expect(locked.revisions == [ListID(1): 1])
            #expect(locked.changesAfterBases.isEmpty)
            let nodeA = Thread {
                do {
                    let store = PostgresStore(connection: try PostgresConnection(conninfo: conninfo))
                    nodeAPID.withLock { $0 = store.connection.backendPID }
                    try store.commit(locking: [(ListID(1), 1)]) { locked in
                        seen.withLock { $0 = locked }
                        return []
                    }
                } catch {
                    failure.withLock { $0 = "\(error)" }
                }
                finished.signal()
            }
            nodeA.start()
            // Node A must be waiting on the row lock before B commits.
            let waiting = try pollDatabase(every: .milliseconds(5)) {
                let pid = nodeAPID.withLock { $0 }
                guard pid != 0 else { return false }
                return try watcher.execute("SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'",
                                           [.int32(pid)]).rowCount == 1
            }
            #expect(waiting)
            return [Fixture.rename(1, from: 1, to: "By B")]
        }
        #expect(finished.wait(timeout: .now() + 30) == .success)
        #expect(failure.withLock { $0 } == nil)
        let locked = try #require(seen.withLock { $0 })
        #expect(locked.revisions == [ListID(1): 2])
        #expect(locked.changesAfterBases[ListID(1)] == Fixture.rename(1, from: 1, to: "By B").changes)
        _ = store
    }

    /// The changes after the bases come with the lock for stale lists only.
    @Test func theLockFlightReadsTheChangesAfterEachBase() throws {
        let (store, _) = try TestCluster.freshStore()
        try store.commit([Fixture.create(1), Fixture.create(2), Fixture.rename(2, from: 1, to: "Two"),
                          Fixture.rename(2, from: 2, to: "Three")])
        var seen: LockedLists?
        try store.commit(locking: [(ListID(1), 1), (ListID(2), 1), (ListID(3), 1)]) { locked in
            seen = locked
            return [Fixture.rename(1, from: 1, to: "One")]
        }
        #expect(seen?.revisions == [ListID(1): 1, ListID(2): 3])
        #expect(seen?.changesAfterBases.keys.sorted { $0.rawValue < $1.rawValue } == [ListID(2)])
        #expect(seen?.changesAfterBases[ListID(2)]?.map(\.revision) == [2, 3])
        #expect(try store.list(ListID(1))?.summary.revision == 2)
    }

    /// A revision check that fails in the writing flight rolls everything
    /// back and names the list, with the connection still usable.
    @Test func aFailedRevisionCheckInTheWritingFlightCommitsNothing() throws {
        let (store, _) = try TestCluster.freshStore()
        try store.commit([Fixture.create(1), Fixture.create(2)])
        try store.commit([Fixture.rename(2, from: 1, to: "Moved")])
        let error = #expect(throws: PostgresError.self) {
            try store.commit(locking: [(ListID(1), 1)]) { _ in
                [Fixture.rename(1, from: 1, to: "Fine"), Fixture.rename(2, from: 1, to: "Stale")]
            }
        }
        #expect(error?.code == .staleRevision)
        #expect(error?.lists == [ListID(2)])
        #expect(store.connection.isUsable)
        #expect(try store.list(ListID(1))?.summary.revision == 1)
        #expect(try store.connection.execute("SELECT count(*) FROM changes").int64(0, 0) == 3)
    }

    /// The rebase read (`Statements.changesAfterEach`, in the lock window,
    /// unlimited) and the follower's (at most 1000 a list) read each list's
    /// changes through the primary key, never a sequential scan of
    /// `changes`, with the custom and the generic plan.
    @Test func theRebaseReadUsesTheIndex() throws {
        let (store, _) = try TestCluster.freshStore()
        let connection = store.connection
        try connection.executeScript("""
            INSERT INTO changes (list_id, revision, namespace, kind, body)
            SELECT l, r, '', 1, '\\x00'::bytea FROM generate_series(1, 50) AS l, generate_series(1, 100) AS r;
            ANALYZE changes
            """)
        #expect(try connection.execute("SELECT count(*) FROM changes").int64(0, 0) == 5000)
        // Prepared as the committer prepares it.
        _ = try store.changes(after: [ListID(1): 100])
        let explains: [StaticString] = [
            """
            EXPLAIN (FORMAT JSON) EXECUTE ckl_changes_after_each(
                '{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50}'::int8[],
                array_fill(98::int8, ARRAY[50]), 9223372036854775807)
            """,
            """
            EXPLAIN (FORMAT JSON) EXECUTE ckl_changes_after_each(
                '{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50}'::int8[],
                array_fill(98::int8, ARRAY[50]), 1000)
            """,
        ]
        for mode: StaticString in ["SET plan_cache_mode = force_custom_plan", "SET plan_cache_mode = force_generic_plan"] {
            for explain in explains {
                try connection.executeScript(mode)
                let plan = try connection.execute(explain)
                let text = try #require(try plan.string(0, 0))
                let nodes = try Self.planNodes(text)
                #expect(!nodes.isEmpty)
                #expect(!nodes.contains { $0.type == "Seq Scan" && $0.relation == "changes" }, "\(mode): \(text)")
                // Read through the primary key: an index scan, or a bitmap heap scan over one.
                #expect(nodes.contains { $0.relation == "changes" && ["Index Scan", "Index Only Scan", "Bitmap Heap Scan"].contains($0.type) },
                        "\(mode): \(text)")
            }
        }
        #expect(Statements.changesAfterEach.name == "ckl_changes_after_each")
    }

    /// Every node of an `EXPLAIN (FORMAT JSON)` plan: its type and relation.
    private static func planNodes(_ json: String) throws -> [(type: String, relation: String?)] {
        let top = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        var nodes: [(type: String, relation: String?)] = []
        var pending = top.compactMap { $0["Plan"] as? [String: Any] }
        while let node = pending.popLast() {
            nodes.append((node["Node Type"] as? String ?? "", node["Relation Name"] as? String))
            pending += node["Plans"] as? [[String: Any]] ?? []
        }
        return nodes
    }
}
