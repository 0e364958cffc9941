import ChecklistClient
import ChecklistModel
import ChecklistTesting
import Foundation
import Testing

/// Two nodes and PostgreSQL, each on a host of its own (issue 13,
/// "Separate hosts"): node A's database link is cut while node B goes on.
/// In `SeparateHostsTests`, whose traits skip it where namespaces cannot be made.
extension NetworkLabSuites.SeparateHostsTests {
    /// A's link to the database is cut. Writes through B succeed and
    /// B's subscriber sees them; A refuses writes with UNAVAILABLE and
    /// serves what it has. The link comes back: A catches up (the same
    /// revision and rows as B), A's subscriber receives every missed
    /// change in order without gap or duplicate, and a keyed patch B
    /// acknowledged during the cut, retried on A, gets B's answer and
    /// is applied once.
    @Test func aNodeCutOffCatchesUpWithTheOtherWhenItsLinkComesBack() async throws {
        let hosts = try SeparateHosts()
        defer { hosts.remove() }
        let a = try hosts.startNode("na", route: .ownLink)
        defer { a.process.kill() }
        let b = try hosts.startNode("nb", route: .ownLink)
        defer { b.process.kill() }
        let link = try #require(a.databaseLink)

        // Requests that hang on the dead link fail the test instead of holding it to its time limit.
        let clientA = try await a.connect(name: "writer-a", requestTimeout: .seconds(90))
        let clientB = try await b.connect(name: "writer-b", requestTimeout: .seconds(90))
        // Subscribed to every list before the list exists: its creation is the first push.
        var pushesA = try await PushRecorder.subscribe(on: a)
        var pushesB = try await PushRecorder.subscribe(on: b)
        defer {
            pushesA.close()
            pushesB.close()
        }

        let list = try await clientA.createList(name: "Two hosts", icon: "Inbox").id
        // Three patches through A, then (once B has them: a write on a
        // stale copy would lose to A's) three through B.
        var before: [String] = []
        for (client, name) in [(clientA, "a"), (clientB, "b")] {
            if name == "b" {
                let followed = await pushesB.read(list, through: 4)
                #expect(followed, "B follows A's writes")
            }
            for n in 0..<3 {
                let text = "\(name)-before-\(n)"
                _ = try await client.patch(list, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: text))])
                before.append(text)
            }
        }
        let beforeCut = Revision(1 + before.count)
        let beforeOnA = await pushesA.read(list, through: beforeCut)
        let beforeOnB = await pushesB.read(list, through: beforeCut)
        #expect(beforeOnA && beforeOnB, "the subscribers before the cut: A \(beforeOnA), B \(beforeOnB)")

        let logOffset = a.process.standardErrorCount
        try link.cut()

        // B goes on, and its subscriber sees its writes.
        var during: [String] = []
        for n in 0..<10 {
            let text = "b-cut-\(n)"
            _ = try await clientB.patch(list, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: text))])
            during.append(text)
        }
        let key = IdempotencyKey(client: 0xAB_CDEF, sequence: 1)
        let keyedOps: [PatchOperation] = [.insert(tempRef: 7, position: .end, fields: ItemFields(text: "keyed"))]
        let answeredByB = try await clientB.patch(list, idempotencyKey: key, ops: keyedOps)
        let final = beforeCut + Revision(during.count) + 1
        #expect(answeredByB.revision == final)
        let duringOnB = await pushesB.read(list, through: final)
        #expect(duringOnB, "B's subscriber during the cut")

        // A serves what it has, and refuses writes. The first one is in
        // the transaction that finds the link dead: UNAVAILABLE, outcome
        // unknown (it loses to B's commits later); once the refusal took
        // hold, a write is refused and never applied.
        let served = try await clientA.page(list, limit: 1000).items.map(\.text)
        #expect(Set(before).isSubset(of: served), "A serves what it had before the cut")
        #expect(Set(during).isDisjoint(with: served), "A cannot have B's writes during the cut")
        for text in ["a-cut-unknown", "a-cut-refused"] {
            do {
                _ = try await clientA.patch(list, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: text))])
                Issue.record("\(text) was acknowledged while A's link was cut")
            } catch let error as ClientError {
                #expect(error.serverError?.code == .unavailable, "\(text): \(error)")
            }
            if text == "a-cut-unknown" {
                #expect(a.process.waitForStandardError(containing: "event=postgres_lost", after: logOffset, timeout: .seconds(5)))
            }
        }
        // Its lists show a change of unknown outcome: not what is committed.
        try await expectRefused("LISTS on A showing a change of unknown outcome") { try await clientA.lists() }

        try link.restore()
        #expect(a.process.waitForStandardError(containing: "event=postgres_reconnected", after: logOffset, timeout: .seconds(60)))
        let caughtUpOnA = await pushesA.read(list, through: final)
        #expect(caughtUpOnA, "A's subscriber after the link came back")

        // The keyed patch retried on A gets B's answer (a retry that loses
        // to the stored answer closes its connection unanswered: try again).
        var retried: PatchOK?
        for _ in 0..<5 where retried == nil {
            let again = try await a.connect(name: "retry-a", requestTimeout: .seconds(30))
            retried = try? await again.patch(list, idempotencyKey: key, ops: keyedOps)
            await again.close()
        }
        #expect(retried?.revision == answeredByB.revision, "\(a.process.standardError.suffix(1500))")
        #expect(retried?.ids == answeredByB.ids)

        // The patch of unknown outcome is either dropped or, kept by A,
        // committed (rebased on B's) once the link is back. A write through
        // A commits after it, so its revision is where both nodes settle.
        let settled = try await clientA.patch(list, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "a-after"))]).revision
        #expect(settled == final + 1 || settled == final + 2, "A's write after the cut at \(settled), B's last at \(final)")
        let settledOnA = await pushesA.read(list, through: settled)
        let settledOnB = await pushesB.read(list, through: settled)
        #expect(settledOnA && settledOnB, "both subscribers reach \(settled)")
        let expected = Array(1...settled)
        #expect(pushesA.revisions == expected, "A's subscriber: every change once, in order")
        #expect(pushesB.revisions == expected, "B's subscriber: every change once, in order")

        // A holds what B holds: the same revision and rows.
        let rowsA = try await clientA.page(list, limit: 1000)
        let rowsB = try await clientB.page(list, limit: 1000)
        #expect(rowsA.revision == settled && rowsB.revision == settled, "A at \(rowsA.revision), B at \(rowsB.revision)")
        #expect(rowsA.items == rowsB.items, "A's rows are B's")
        let texts = rowsB.items.map(\.text)
        for text in before + during + ["keyed", "a-after"] { #expect(texts.count { $0 == text } == 1, "\(text) stored \(texts.count { $0 == text }) times") }
        #expect(texts.count { $0 == "a-cut-unknown" } == Int(settled - final - 1), "a-cut-unknown is stored exactly when it took a revision")
        #expect(!texts.contains("a-cut-refused"), "a refused patch was applied")
        let summaryA = try await clientA.lists().first { $0.id == list }
        let summaryB = try await clientB.lists().first { $0.id == list }
        #expect(summaryA?.revision == settled && summaryA == summaryB, "LIST_LISTS: A \(String(describing: summaryA)), B \(String(describing: summaryB))")

        await clientA.close()
        await clientB.close()
        #expect(a.stop() == .exited(0))
        #expect(b.stop() == .exited(0))
    }
}

/// One subscriber to every list of a node, its CHANGE pushes read in the
/// test's own task. A watchdog closes the connection when a read waits too
/// long, which ends the pushes.
private struct PushRecorder {
    private let connection: ChecklistConnection
    private var iterator: AsyncStream<LivePush>.Iterator
    /// The revisions pushed so far, of every list, in arrival order.
    private(set) var revisions: [Revision] = []

    static func subscribe(on node: HostedNode) async throws -> PushRecorder {
        let connection = try await node.connect(name: "subscriber", requestTimeout: .seconds(90))
        let pushes = connection.livePushes()
        _ = try await connection.subscribe([], allLists: true)
        return PushRecorder(connection: connection, iterator: pushes.makeAsyncIterator())
    }

    private init(connection: ChecklistConnection, iterator: AsyncStream<LivePush>.Iterator) {
        self.connection = connection
        self.iterator = iterator
    }

    /// Reads pushes until one of `list` at `revision` or later (true), or
    /// until the pushes end (false): the connection closed, the
    /// subscription was dropped, or nothing came for `patience`.
    mutating func read(_ list: ListID, through revision: Revision, patience: Duration = .seconds(90)) async -> Bool {
        if revisions.last.map({ $0 >= revision }) == true { return true }
        let connection = connection
        let watchdog = Task {
            try await Task.sleep(for: patience)
            await connection.close()
        }
        defer { watchdog.cancel() }
        while let push = await iterator.next() {
            guard case .change(let change) = push else { return false }
            guard change.list == list else { continue }
            revisions.append(change.revision)
            if change.revision >= revision { return true }
        }
        return false
    }

    func close() {
        let connection = connection
        Task { await connection.close() }
    }
}
