import ChecklistClient
import ChecklistModel
import ChecklistTesting
import Foundation
import Testing

/// Several `checklistd --postgres` nodes on one database of this run's
/// private cluster (docs/POSTGRES.md, "Several nodes"): writes through every
/// node to one list are ordered by the database, every node's cache and
/// pushes follow the others' commits.
@Suite(.enabled(if: PostgresCluster.binariesFound, "no PostgreSQL binaries (Debian package postgresql): skipped"),
       .timeLimit(.minutes(10)))
struct PostgresNodesTests {
    /// Starts `count` nodes on one fresh database.
    static func nodes(_ count: Int, _ arguments: [String] = []) throws -> [TestServer] {
        let first = try TestServer.start(arguments, store: .postgres)
        var nodes = [first]
        for _ in 1..<count { nodes.append(try TestServer.start(arguments, store: .postgres, postgres: first.postgres)) }
        return nodes
    }

    /// Waits (up to 30 s) until `node` has `list` at `revision`, by its
    /// pushes: subscribes there to every list of the namespace (so a list
    /// created through another node counts too), takes the revision the
    /// SUBSCRIBED answer gives, then each CHANGE push of `list`. At the
    /// deadline the connection is closed, which ends the pushes.
    static func waitFor(_ list: ListID, at revision: Revision, on node: TestServer) async throws -> Bool {
        try await waitFor([list: revision], on: node)
    }

    /// The same for several lists at once: true once every list of
    /// `targets` reached its revision on `node`.
    static func waitFor(_ targets: [ListID: Revision], on node: TestServer) async throws -> Bool {
        let client = try await node.connect(name: "waiter")
        let deadline = Task {
            try await Task.sleep(for: .seconds(30))
            await client.close()
        }
        defer {
            deadline.cancel()
            Task { await client.close() }
        }
        let pushes = client.livePushes()
        let answer = try await client.subscribe([], allLists: true)
        var waiting = targets
        for entry in answer.entries where waiting[entry.list] == entry.revision { waiting[entry.list] = nil }
        if waiting.isEmpty { return true }
        for await push in pushes {
            guard case .change(let change) = push else { return false }  // dropped: too far behind to tell
            if waiting[change.list] == change.revision { waiting[change.list] = nil }
            if waiting.isEmpty { return true }
        }
        return false
    }

    /// Every item of `list` on `client`.
    static func texts(_ list: ListID, _ client: ChecklistConnection) async throws -> [(id: ItemID, text: String)] {
        var items: [(ItemID, String)] = []
        while true {
            let page = try await client.page(list, start: .offset(UInt64(items.count)), limit: 1000)
            items += page.items.map { ($0.id, $0.text) }
            if !page.hasMore { return items }
        }
    }

    /// Writers on every node insert into one list (a patch whose commit lost
    /// to another node's is rebased; should one fail anyway, the writer
    /// reconnects and sends it again). Afterwards every node holds the same
    /// list: every patch once, unique item ids, counts matching the rows,
    /// revisions contiguous in the change feed, and every subscriber (one
    /// per node) got every change in order without gap or duplicate.
    @Test func concurrentWritersThroughEveryNodeOnOneList() async throws {
        let nodes = try Self.nodes(3)
        defer { nodes.forEach { $0.stop() } }
        let setup = try await nodes[0].connect()
        let list = try await setup.createList(name: "Shared", icon: "Inbox")
        await setup.close()
        for node in nodes { #expect(try await Self.waitFor(list.id, at: 1, on: node)) }

        var subscribers: [(ChecklistConnection, AsyncStream<LivePush>)] = []
        for node in nodes {
            let client = try await node.connect(name: "subscriber")
            let pushes = client.livePushes()
            _ = try await client.subscribe([.init(list: list.id, revision: 1)])
            subscribers.append((client, pushes))
        }
        let perWriter = 25
        let writers = nodes.indices.flatMap { n in (0..<2).map { (n, $0) } }
        await withTaskGroup(of: Void.self) { group in
            for (n, w) in writers {
                group.addTask {
                    var client = try? await nodes[n].connect(name: "writer")
                    var i = 0
                    var attempts = 0
                    while i < perWriter && attempts < 2000 {
                        attempts += 1
                        do {
                            guard let c = client else { throw CancellationError() }
                            _ = try await c.patch(list.id, ops: [.insert(tempRef: nil, position: .end,
                                                                          fields: ItemFields(text: "n\(n)w\(w)i\(i)"))])
                            i += 1
                        } catch {
                            await client?.close()
                            client = try? await nodes[n].connect(name: "writer")
                        }
                    }
                    await client?.close()
                }
            }
        }
        let total = writers.count * perWriter
        let final = Revision(1 + total)
        for (index, node) in nodes.enumerated() {
            let reached = try await Self.waitFor(list.id, at: final, on: node)
            #expect(reached, "node \(index) did not reach revision \(final): \(node.process.standardError.suffix(3000))")
            guard reached else { return }
            let client = try await node.connect()
            let items = try await Self.texts(list.id, client)
            #expect(items.count == total)
            #expect(Set(items.map(\.id)).count == items.count, "an item id was given twice")
            #expect(Set(items.map(\.text)).count == total, "a patch is missing or applied twice")
            let summary = try #require(try await client.lists().first { $0.id == list.id })
            #expect(summary.itemCount == UInt64(total))
            #expect(summary.uncheckedCount == UInt64(total))
            // Every change is stored: from revision 1 every node answers all
            // of them (from its feed, or from the database past it).
            let feed = try await client.changes(of: list.id, since: 1)
            #expect(feed.changes.map(\.revision) == Array(2...final), "node \(index)'s change feed")
            await client.close()
        }
        for (index, (client, pushes)) in subscribers.enumerated() {
            var revisions: [Revision] = []
            for await push in pushes {
                guard case .change(let change) = push else { break }
                revisions.append(change.revision)
                if change.revision >= final { break }
            }
            #expect(revisions == Array(2...final), "subscriber on node \(index)")
            await client.close()
        }
    }

    /// A keyed patch acknowledged by node A, retried on node B, gets A's
    /// answer and is applied once.
    @Test func aRetryOnAnotherNodeGetsTheFirstAnswer() async throws {
        let nodes = try Self.nodes(2)
        defer { nodes.forEach { $0.stop() } }
        let a = try await nodes[0].connect()
        let list = try await a.createList(name: "Keyed", icon: "Inbox")
        let key = IdempotencyKey(client: 0x1234_5678, sequence: 1)
        let ops: [PatchOperation] = [.insert(tempRef: 7, position: .end, fields: ItemFields(text: "once"))]
        let first = try await a.patch(list.id, idempotencyKey: key, ops: ops)
        await a.close()
        // Node B answers from its memory once it followed A's commit; before
        // that its attempt loses to A's stored answer and the connection
        // closes unanswered: the client retries on a new one.
        var again: PatchOK?
        for _ in 0..<5 where again == nil {
            let b = try await nodes[1].connect()
            again = try? await b.patch(list.id, idempotencyKey: key, ops: ops)
            await b.close()
        }
        #expect(again?.revision == first.revision, "\(nodes[1].process.standardError.suffix(1500))")
        #expect(again?.ids == first.ids)
        let b = try await nodes[1].connect()
        #expect(try await Self.texts(list.id, b).map(\.text) == ["once"])
        await b.close()
        #expect(try await Self.waitFor(list.id, at: first.revision, on: nodes[0]))
    }

    /// A keyed DELETE acknowledged by node A, sent again to node B after A's
    /// checkpoint of the list covered it and before B loaded the list's rows
    /// (so B's load replays nothing that carries the key): B finds the item
    /// gone, but answers A's PATCH_OK, not `NOT_FOUND` of its own.
    @Test func aRetryRefusedOnAnotherNodeGetsTheFirstAnswer() async throws {
        let nodes = try Self.nodes(2, ["--postgres-checkpoint-after", "1"])
        defer { nodes.forEach { $0.stop() } }
        let a = try await nodes[0].connect()
        let list = try await a.createList(name: "Keyed", icon: "Inbox")
        _ = try await a.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "gone"))])
        let key = IdempotencyKey(client: 0x0DE1_E7E0, sequence: 1)
        let delete: [PatchOperation] = [.delete(.id(ItemID(1)))]
        let first = try await a.patch(list.id, idempotencyKey: key, ops: delete)
        await a.close()
        #expect(nodes[0].process.waitForStandardError(containing: "list=\(list.id.rawValue) revision=\(first.revision) items=",
                                                          timeout: .seconds(60)),
                "A's checkpoint (event=postgres_checkpoint) at the delete's revision")
        #expect(try await Self.waitFor(list.id, at: first.revision, on: nodes[1]))
        let b = try await nodes[1].connect()
        let again = try await b.patch(list.id, idempotencyKey: key, ops: delete)
        #expect(again.revision == first.revision)
        #expect(try await b.page(list.id, limit: 10).revision == first.revision)
        await b.close()
    }

    /// A node killed with -9 while writers on both nodes insert: every
    /// acknowledged patch is on the surviving node exactly once.
    @Test func aNodeKilledUnderLoadLosesNothingAcknowledged() async throws {
        let nodes = try Self.nodes(2)
        defer { nodes.forEach { $0.stop() } }
        let setup = try await nodes[1].connect()
        let list = try await setup.createList(name: "Killed", icon: "Inbox").id
        await setup.close()
        #expect(try await Self.waitFor(list, at: 1, on: nodes[0]))
        let acknowledged = Acknowledged()
        let tasks = (0..<4).map { w in
            Task {
                let node = nodes[w % 2]
                guard var client = try? await node.connect(name: "writer") else { return }
                var i = 0
                while !Task.isCancelled && i < 400 {
                    let n = w * 1000 + i
                    do {
                        _ = try await client.patch(list, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "p\(n)"))])
                        acknowledged.insert(n)
                        i += 1
                    } catch {
                        await client.close()
                        guard let again = try? await node.connect(name: "writer") else { return }
                        client = again
                    }
                }
                await client.close()
            }
        }
        #expect(await acknowledged.wait(forCount: 60, unlessMoreStoppedThan: 0))
        nodes[0].crash()
        #expect(await acknowledged.wait(forCount: acknowledged.all.count + 40, unlessMoreStoppedThan: 4))
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        let reader = try await nodes[1].connect()
        let texts = try await Self.texts(list, reader).map(\.text)
        await reader.close()
        let counts = Dictionary(texts.map { ($0, 1) }, uniquingKeysWith: +)
        #expect(counts.values.allSatisfy { $0 == 1 }, "a patch was applied twice")
        let missing = acknowledged.all.filter { counts["p\($0)"] == nil }
        #expect(missing.isEmpty, "acknowledged patches lost: \(missing.sorted().prefix(10))")
    }
}
