import ChecklistClient
import ChecklistModel
import ChecklistPostgres
import ChecklistTesting
import Foundation
import Synchronization
import Testing

/// `checklistd --postgres` when PostgreSQL misbehaves: a statement stuck on
/// a lock past the statement timeout, and a PostgreSQL restart under load.
/// A change whose commit failed is answered `ERROR UNAVAILABLE` (outcome
/// unknown) on a connection that stays open, and a retry with the same
/// idempotency key gets the real answer once.
@Suite(.enabled(if: PostgresCluster.binariesFound, "no PostgreSQL binaries (Debian package postgresql): skipped"),
       .timeLimit(.minutes(10)))
struct PostgresMisbehaviourTests {
    @Test func aStatementStuckOnALockTimesOutAndTheChangeIsAnsweredUnavailable() async throws {
        let server = try TestServer.start(["--postgres-statement-timeout", "1"], store: .postgres)
        defer { server.stop() }
        let client = try await server.connect()
        let list = try await client.createList(name: "Locked", icon: "Inbox")
        _ = try await client.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "before"))])
        let other = try await client.createList(name: "Other", icon: "Inbox")
        _ = try await client.patch(other.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "other"))])

        let blocker = try PostgresConnection(conninfo: try #require(server.postgres))
        try blocker.executeScript("BEGIN")
        try blocker.executeScript("LOCK TABLE lists IN ACCESS EXCLUSIVE MODE")
        let key = IdempotencyKey(client: 0x6C6F_636B, sequence: 1)
        let locked: [PatchOperation] = [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "while locked"))]
        do {
            _ = try await client.patch(list.id, idempotencyKey: key, ops: locked)
            Issue.record("a patch was acknowledged while its commit could not run")
        } catch let error as ClientError {
            #expect(error.serverError?.code == .unavailable, "\(error)")
            #expect(error.serverError?.message.contains("may still be applied") == true, "\(error)")
        }
        #expect(server.process.waitForStandardError(containing: "event=postgres_commit_failed", timeout: .seconds(30)))
        // The connection stays open and reads of the cache go on, except
        // of the list whose change is undecided: a page is what is committed
        // at its revision, and that is not known.
        #expect(try await client.page(other.id, limit: 10).items.map(\.text) == ["other"])
        try await expectRefused("a page showing an undecided change") { try await client.page(list.id, limit: 10).items.map(\.text) }
        // A retry of the patch is not acknowledged while nothing can commit.
        try await expectRefused("a retry while its commit could not run") {
            try await client.patch(list.id, idempotencyKey: key, ops: locked)
        }

        try blocker.executeScript("COMMIT")
        // The kept batch commits once the lock is gone: the retry with the
        // same key gets the original answer (applying nothing again).
        var retried: PatchOK?
        for _ in 0..<200 where retried == nil {
            do {
                retried = try await client.patch(list.id, idempotencyKey: key, ops: locked)
            } catch let error as ClientError where error.serverError?.code == .unavailable {
                try await Task.sleep(for: .milliseconds(50))  // backoff between retries, as a client would
            }
        }
        #expect(retried != nil, "the retry never got its answer")
        _ = try await client.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "after"))])
        #expect(try await client.page(list.id, limit: 10).items.map(\.text) == ["before", "while locked", "after"])
        await client.close()

        // And the database holds it exactly so.
        _ = server.process.stop()
        let restarted = try TestServer.start(store: .postgres, postgres: server.postgres)
        defer { restarted.stop() }
        let reader = try await restarted.connect()
        #expect(try await reader.page(list.id, limit: 10).items.map(\.text) == ["before", "while locked", "after"])
        await reader.close()
    }

    /// `pg_ctl restart -m fast` of the node's own cluster under four writers
    /// that retry each patch with its idempotency key until acknowledged:
    /// their failures are ERROR UNAVAILABLE answers (never a closed
    /// connection or a hang), the node logs the loss and its reconnection,
    /// and every acknowledged patch is stored exactly once.
    @Test func aPostgresRestartUnderLoadLosesNothingAcknowledged() async throws {
        let cluster = try PostgresCluster(settings: ["synchronous_commit": "on"])
        defer { cluster.stop() }
        let conninfo = try cluster.createDatabase("checklistd_restart")
        let server = try TestServer.start(store: .postgres, postgres: conninfo)
        defer { server.stop() }
        let setup = try await server.connect()
        let list = try await setup.createList(name: "Restarted", icon: "Inbox").id
        await setup.close()

        let tally = WriterTally()
        let writers = (0..<4).map { w in
            Task {
                let client = try await server.connect(name: "writer-\(w)")
                var sequence: UInt64 = 0
                while !tally.isStopping {
                    sequence += 1
                    let key = IdempotencyKey(client: 0x5245_0000 + UInt64(w), sequence: sequence)
                    let text = "w\(w)-\(sequence)"
                    while true {
                        do {
                            _ = try await client.patch(list, idempotencyKey: key,
                                                       ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: text))])
                            tally.acknowledged(text)
                            break
                        } catch let error as ClientError where error.serverError?.code == .unavailable {
                            tally.unavailable()
                            try await Task.sleep(for: .milliseconds(20))  // backoff before the retry
                        }
                    }
                }
                await client.close()
            }
        }
        #expect(await tally.wait(forAcknowledged: 100))
        try cluster.restart()
        #expect(server.process.waitForStandardError(containing: "event=postgres_lost", timeout: .seconds(60)))
        #expect(server.process.waitForStandardError(containing: "event=postgres_reconnected", timeout: .seconds(60)))
        let afterRestart = tally.count
        #expect(await tally.wait(forAcknowledged: afterRestart + 100))
        tally.stop()
        for writer in writers { try await writer.value }  // a writer that met another error fails the test here
        #expect(tally.unavailableCount >= 1, "no writer saw ERROR UNAVAILABLE")

        let counts = try await server.restartedTextCounts(of: list)
        #expect(counts.values.allSatisfy { $0 == 1 }, "a patch was applied twice")
        let missing = tally.all.filter { counts[$0] == nil }
        #expect(missing.isEmpty, "acknowledged patches lost: \(missing.sorted().prefix(10))")
    }
}

/// What the restart test's writers saw, and a wait for their progress.
private final class WriterTally: Sendable {
    private struct State {
        var acknowledged: Set<String> = []
        var unavailable = 0
        var stopping = false
        var waiters: [(target: Int, continuation: CheckedContinuation<Bool, Never>)] = []
    }

    private let state = Mutex(State())

    func acknowledged(_ text: String) {
        let ready = state.withLock { s -> [CheckedContinuation<Bool, Never>] in
            s.acknowledged.insert(text)
            let count = s.acknowledged.count
            let ready = s.waiters.filter { $0.target <= count }.map(\.continuation)
            s.waiters.removeAll { $0.target <= count }
            return ready
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    func unavailable() { state.withLock { $0.unavailable += 1 } }

    /// Asks the writers to stop after the patch each has in hand.
    func stop() { state.withLock { $0.stopping = true } }
    var isStopping: Bool { state.withLock { $0.stopping } }

    var count: Int { state.withLock { $0.acknowledged.count } }
    var unavailableCount: Int { state.withLock { $0.unavailable } }
    var all: Set<String> { state.withLock { $0.acknowledged } }

    /// True once `target` patches are acknowledged; false after 120 s without.
    func wait(forAcknowledged target: Int) async -> Bool {
        await withCheckedContinuation { continuation in
            let now = state.withLock { s -> Bool in
                if s.acknowledged.count >= target { return true }
                s.waiters.append((target, continuation))
                return false
            }
            if now { continuation.resume(returning: true) }
            Task {
                try? await Task.sleep(for: .seconds(120))
                let late = state.withLock { s -> CheckedContinuation<Bool, Never>? in
                    guard let index = s.waiters.firstIndex(where: { $0.target == target }) else { return nil }
                    return s.waiters.remove(at: index).continuation
                }
                late?.resume(returning: false)
            }
        }
    }
}
