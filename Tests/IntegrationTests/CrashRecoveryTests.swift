import ChecklistClient
import ChecklistModel
import ChecklistRandom
import ChecklistTesting
import Synchronization
import Testing

/// `--fsync always` (or PostgreSQL with synchronous_commit on) against
/// SIGKILL: whatever a client was told is saved survives the crash, exactly once.
@Suite(.timeLimit(.minutes(10))) struct CrashRecoveryTests {
    @Test(arguments: TestStore.available)
    func acknowledgedPatchesSurviveSigkillExactlyOnce(store: TestStore) async throws {
        let directory = try TemporaryDirectory(prefix: "checklistd-crash")
        defer { directory.remove() }
        let database = store == .postgres ? try PostgresCluster.freshSharedDatabase(prefix: "checklistd_crash") : nil
        func startServer() throws -> TestServer {
            if database != nil { return try TestServer.start(store: .postgres, postgres: database) }
            return try TestServer.start(["--fsync", "always"], directory: directory)
        }
        var rng = SplitMix64(seed: 20261129)
        let acknowledged = Acknowledged()
        var listID: ListID?
        var next = 0
        for cycle in 0..<4 {
            let server = try startServer()
            let client = try await server.connect()
            if listID == nil { listID = try await client.createList(name: "Crash", icon: "Inbox").id }
            let list = try #require(listID)
            try await Self.expectEveryAcknowledgedOnce(client, list: list, acknowledged.all, cycle: cycle)

            // Four writers patch as fast as they can; kill the server after a
            // random number of acknowledgements, with patches in flight.
            let killAfter = 20 + Int(rng.next() % 150)
            let first = next
            next += 100_000
            let stoppedBefore = acknowledged.stoppedWriters
            let writers = (0..<4).map { w in
                Task {
                    var n = first + w
                    while !Task.isCancelled {
                        do {
                            _ = try await client.patch(list, ops: [.insert(tempRef: nil, position: .end,
                                                                           fields: ItemFields(text: "p\(n)"))])
                        } catch {
                            acknowledged.writerStopped()
                            return
                        }
                        acknowledged.insert(n)
                        n += 4
                    }
                }
            }
            let baseline = acknowledged.count
            let reached = await acknowledged.wait(forCount: baseline + killAfter, unlessMoreStoppedThan: stoppedBefore)
            #expect(reached, "cycle \(cycle): every writer stopped before \(killAfter) acknowledgements")
            server.crash()
            for w in writers { _ = await w.value }
            await client.close()
        }
        let server = try startServer()
        defer { server.stop() }
        let client = try await server.connect()
        try await Self.expectEveryAcknowledgedOnce(client, list: try #require(listID), acknowledged.all, cycle: 4)
        await client.close()
    }

    private static func expectEveryAcknowledgedOnce(_ client: ChecklistConnection, list: ListID, _ acknowledged: Set<Int>,
                                                    cycle: Int) async throws {
        var texts: [String] = []
        var offset: UInt64 = 0
        while true {
            let page = try await client.page(list, start: .offset(offset), limit: 1000)
            texts += page.items.map(\.text)
            offset += UInt64(page.items.count)
            if !page.hasMore { break }
        }
        let counts = Dictionary(texts.map { ($0, 1) }, uniquingKeysWith: +)
        #expect(counts.values.allSatisfy { $0 == 1 }, "cycle \(cycle): some patch was applied twice")
        let missing = acknowledged.filter { counts["p\($0)"] == nil }
        #expect(missing.isEmpty, "cycle \(cycle): acknowledged patches lost: \(missing.sorted().prefix(10))")
    }
}

/// The patch numbers the server acknowledged, from several writer tasks,
/// and a wait for their count that a writer's failure ends too (so a
/// server that stopped answering fails the test instead of hanging it).
final class Acknowledged: Sendable {
    private struct State {
        var numbers: Set<Int> = []
        var stoppedWriters = 0
        /// Who waits for the count to reach `target`.
        var waiters: [(target: Int, continuation: CheckedContinuation<Bool, Never>)] = []
    }
    private let state = Mutex(State())

    func insert(_ n: Int) {
        let ready = state.withLock { s in
            s.numbers.insert(n)
            let count = s.numbers.count
            let ready = s.waiters.filter { $0.target <= count }
            s.waiters.removeAll { $0.target <= count }
            return ready
        }
        for waiter in ready { waiter.continuation.resume(returning: true) }
    }

    /// Writers that gave up so far.
    var stoppedWriters: Int { state.withLock { $0.stoppedWriters } }

    /// A writer gave up (its patch failed): waiters are released, unsatisfied.
    func writerStopped() {
        let waiting = state.withLock { s in
            s.stoppedWriters += 1
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiting { waiter.continuation.resume(returning: false) }
    }

    /// Waits until `target` numbers are in (true), or until more than
    /// `stopped` writers have given up (false).
    func wait(forCount target: Int, unlessMoreStoppedThan stopped: Int) async -> Bool {
        await withCheckedContinuation { continuation in
            let answer: Bool? = state.withLock { s in
                if s.numbers.count >= target { return true }
                if s.stoppedWriters > stopped { return false }
                s.waiters.append((target, continuation))
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    var count: Int { state.withLock { $0.numbers.count } }
    var all: Set<Int> { state.withLock { $0.numbers } }
}
