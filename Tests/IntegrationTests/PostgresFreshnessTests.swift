import ChecklistClient
import ChecklistModel
import ChecklistSocket
import ChecklistTesting
import ChecklistWire
import Testing

/// Revisions committed through another node, and changes past a node's
/// retained feed, on nodes sharing one database (docs/POSTGRES.md,
/// "Several nodes"): a request naming a revision the node has not followed
/// yet waits for it instead of being refused, and CHANGES_SINCE reaching
/// back past the node's feed is answered from the database.
@Suite(.enabled(if: PostgresCluster.binariesFound, "no PostgreSQL binaries (Debian package postgresql): skipped"),
       .timeLimit(.minutes(10)))
struct PostgresFreshnessTests {
    /// PATCHes through nodes A and B in turn, each on the revision the
    /// other just committed, sent at once (an answer leaves before its node
    /// even tells the others): each node applies it on that revision
    /// instead of answering CONFLICT from its stale cache, and both end
    /// with every item in order.
    @Test func aPatchOnARevisionJustCommittedElsewhereIsAppliedOnTopOfIt() async throws {
        let nodes = try PostgresNodesTests.nodes(2)
        defer { nodes.forEach { $0.stop() } }
        let a = try await nodes[0].connect()
        let b = try await nodes[1].connect()
        let list = try await a.createList(name: "Fresh", icon: "Inbox").id
        var expected: [String] = []
        var revision: Revision = 1
        for round in 0..<20 {
            let first = try await a.patch(list, baseRevision: revision,
                                          ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "a\(round)"))])
            #expect(first.revision == revision + 1, "round \(round)")
            let second: PatchOK
            do {
                second = try await b.patch(list, baseRevision: first.revision,
                                           ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "b\(round)"))])
            } catch {
                Issue.record("round \(round): \(error); node B: \(nodes[1].process.standardError.suffix(2000))")
                return
            }
            #expect(second.revision == first.revision + 1, "round \(round)")
            revision = second.revision
            expected += ["a\(round)", "b\(round)"]
        }
        #expect(try await PostgresNodesTests.texts(list, b).map(\.text) == expected)
        let final = Revision(1 + expected.count)
        #expect(try await PostgresNodesTests.waitFor(list, at: final, on: nodes[0]))
        #expect(try await PostgresNodesTests.texts(list, a).map(\.text) == expected)
        await a.close()
        await b.close()
    }

    /// A list just created through node A, named at once with a revision
    /// on node B (a PATCH on its first revision, CHANGES_SINCE from its
    /// creation): B finds it in the database instead of answering NOT_FOUND.
    @Test func aListJustCreatedElsewhereIsFoundWhenNamedWithARevision() async throws {
        let nodes = try PostgresNodesTests.nodes(2)
        defer { nodes.forEach { $0.stop() } }
        let a = try await nodes[0].connect()
        let b = try await nodes[1].connect()
        for round in 0..<10 {
            let list = try await a.createList(name: "New \(round)", icon: "Inbox").id
            if round % 2 == 0 {
                let ok = try await b.patch(list, baseRevision: 1, ops: [.insert(tempRef: nil, position: .end,
                                                                                 fields: ItemFields(text: "first"))])
                #expect(ok.revision == 2, "round \(round)")
            } else {
                let changes = try await b.changes(of: list, since: 0)
                #expect(changes.changes.map(\.revision) == [1], "round \(round)")
            }
        }
        await a.close()
        await b.close()
    }

    /// A baseRevision below the list's revision is CONFLICT at once, on the
    /// node that committed the newer revision and on another that followed
    /// it; one above what the database holds is CONFLICT too (after the
    /// node looked), and nothing is applied either way. (A stale base that
    /// a stale cache holds as its own revision is applied there and loses
    /// its commit: the committer's case, docs/POSTGRES.md.)
    @Test func aStaleOrUnknownBaseRevisionIsStillAConflict() async throws {
        let nodes = try PostgresNodesTests.nodes(2)
        defer { nodes.forEach { $0.stop() } }
        let a = try await nodes[0].connect()
        let b = try await nodes[1].connect()
        let list = try await a.createList(name: "Stale", icon: "Inbox").id
        let ok = try await a.patch(list, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "one"))])
        let ops: [PatchOperation] = [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "never"))]
        #expect(try await PostgresNodesTests.waitFor(list, at: ok.revision, on: nodes[1]))
        for (client, base) in [(a, ok.revision - 1), (b, ok.revision - 1), (b, ok.revision + 5), (a, ok.revision + 1)] {
            do {
                _ = try await client.patch(list, baseRevision: base, ops: ops)
                Issue.record("a PATCH on base revision \(base) of a list at \(ok.revision) was applied")
            } catch let error as ClientError {
                #expect(error.serverError?.code == .conflict,
                        "base \(base): \(error); nodes: \(nodes.map { $0.process.standardError.suffix(1500) })")
                #expect(error.serverError?.revision == ok.revision, "base \(base)")
            }
        }
        #expect(try await PostgresNodesTests.texts(list, b).map(\.text) == ["one"])
        #expect(try await PostgresNodesTests.texts(list, a).map(\.text) == ["one"])
        await a.close()
        await b.close()
    }

    /// CHANGES_SINCE and SUBSCRIBE naming the revision node A just
    /// committed, sent at once to node B, are answered at that revision
    /// (not RESYNC_REQUIRED as if the client were ahead of the list).
    @Test func changesSinceAndSubscribeWaitForARevisionCommittedElsewhere() async throws {
        let nodes = try PostgresNodesTests.nodes(2)
        defer { nodes.forEach { $0.stop() } }
        let a = try await nodes[0].connect()
        let b = try await nodes[1].connect()
        let list = try await a.createList(name: "Ahead", icon: "Inbox").id
        for round in 0..<10 {
            let ok = try await a.patch(list, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "c\(round)"))])
            let changes = try await b.changes(of: list, since: ok.revision)
            #expect(changes.revision >= ok.revision, "round \(round)")
            let ok2 = try await a.patch(list, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "s\(round)"))])
            let subscriber = try await nodes[1].connect(name: "subscriber")
            let subscribed = try await subscriber.subscribe([.init(list: list, revision: ok2.revision)])
            #expect(subscribed.entries.first?.status == .live, "round \(round)")
            #expect((subscribed.entries.first?.revision ?? 0) >= ok2.revision, "round \(round)")
            await subscriber.close()
        }
        await a.close()
        await b.close()
    }

    /// A node whose in-memory feed holds only its last few changes
    /// (`--retain-bytes` small) answers CHANGES_SINCE from the list's
    /// creation with exactly the changes, paged, that a node with the whole
    /// feed answers: the database's `changes` table holds them.
    @Test func changesSincePastASmallFeedComeFromTheDatabase() async throws {
        let full = try TestServer.start(store: .postgres)
        defer { full.stop() }
        let small = try TestServer.start(["--retain-bytes", "200"], store: .postgres, postgres: full.postgres)
        defer { small.stop() }
        let writer = try await small.connect()
        let list = try await writer.createList(name: "Long", icon: "Inbox").id
        for i in 0..<40 {
            _ = try await writer.patch(list, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "item \(i)"))])
        }
        #expect(try await PostgresNodesTests.waitFor(list, at: 41, on: full))
        let retained = try #require(try await writer.stats().sync?.retainedChanges)
        #expect(retained < 20, "the small feed holds \(retained) changes")
        let fromFull = try await Self.allChanges(list, since: 0, limit: 7, on: full)
        let fromSmall = try await Self.allChanges(list, since: 0, limit: 7, on: small)
        #expect(fromFull.map(\.revision) == Array(1...41))
        #expect(fromSmall == fromFull)
        let one = try await writer.changes(of: list, since: 3, limit: 1)
        #expect(one.revision == 41)
        #expect(one.changes == [fromFull[3]])
        await writer.close()
    }

    /// A restarted node (every list summary-only, its feed empty) answers
    /// CHANGES_SINCE from before its start with the stored changes.
    @Test func changesSinceAfterARestartComeFromTheDatabase() async throws {
        let (again, list, before) = try await Self.restartedWithAList()
        defer { again.stop() }
        #expect(before.map(\.revision) == Array(1...13))
        #expect(try await Self.allChanges(list, since: 0, limit: 1000, on: again) == before)
        #expect(try await Self.allChanges(list, since: 5, limit: 2, on: again) == Array(before[5...]))
    }

    /// A SUBSCRIBE from before a restarted node's start (its feed empty)
    /// says FETCH for a client behind the list, not RESYNC: the catch-up is
    /// read with CHANGES_SINCE, which the database answers, so a
    /// subscription resumed on another node goes on without a resync.
    @Test func subscribePastARestartedNodesFeedSaysFetch() async throws {
        let (again, list, changes) = try await Self.restartedWithAList()
        defer { again.stop() }
        let before = Array(changes[5...])
        let socket = try FrameSocket(port: again.port, timeout: .seconds(10))
        try socket.handshake()
        try socket.send(.subscribe(Subscribe(entries: [Subscribe.Entry(list: list, revision: 5)])), id: 2)
        let (header, answer) = try socket.receive()
        #expect(header.requestID == 2)
        guard case .subscribed(let subscribed) = answer else { Issue.record("expected SUBSCRIBED, got \(answer)"); return }
        #expect(subscribed.entries.map(\.list) == [list])
        #expect(subscribed.entries.map(\.revision) == [13])
        #expect(subscribed.entries.map(\.status) == [.fetch])
        #expect(before.map(\.revision) == Array(6...13))
        #expect(try await Self.allChanges(list, since: 5, limit: 1000, on: again) == before)
    }

    /// CHANGES_SINCE past the node's feed while the database cannot be
    /// reached is `UNAVAILABLE` (try again), not `RESYNC_REQUIRED`: the
    /// database still keeps those changes, and a client told they are gone
    /// would throw its copy away and read everything again.
    @Test func changesPastTheFeedWhileTheDatabaseIsAwayAreUnavailable() async throws {
        let (again, list, _) = try await Self.restartedWithAList()
        let database = try #require(again.postgres)
        again.stop()
        let cluster = try PostgresCluster.shared()
        let relay = try DelayingRelay(to: try SocketAddress(host: "127.0.0.1", port: UInt16(cluster.port)), latency: .zero)
        defer { relay.stop() }
        let node = try TestServer.start(["--retain-bytes", "200"], store: .postgres, postgres: database + " port=\(relay.port)")
        defer { node.stop() }
        let socket = try FrameSocket(port: node.port, timeout: .seconds(30))
        try socket.handshake()
        // The list's rows are loaded; its feed holds only the last changes.
        try socket.send(.getPage(GetPage(list: list, start: .offset(0), limit: 1)), id: 2)
        guard case .page = try socket.receive().message else { Issue.record("expected PAGE"); return }
        relay.stop()
        try socket.send(.changesSince(ChangesSince(list: list, revision: 5, limit: 100)), id: 3)
        let (requestID, error) = try socket.receiveError()
        #expect(requestID == 3)
        #expect(error.code == .unavailable, "\(error)")
    }

    /// A revision committed through node A that node B cannot read (its
    /// link to the database is gone): B's CHANGES_SINCE and SUBSCRIBE from
    /// it are `UNAVAILABLE` (try again), not `RESYNC_REQUIRED` as if the
    /// client were ahead of the list: the database holds that revision.
    @Test func aRevisionANodeCannotReadIsUnavailableThere() async throws {
        let a = try TestServer.start(store: .postgres)
        defer { a.stop() }
        let cluster = try PostgresCluster.shared()
        let relay = try DelayingRelay(to: try SocketAddress(host: "127.0.0.1", port: UInt16(cluster.port)), latency: .zero)
        defer { relay.stop() }
        let b = try TestServer.start(store: .postgres, postgres: try #require(a.postgres) + " port=\(relay.port)")
        defer { b.stop() }
        let writer = try await a.connect()
        let list = try await writer.createList(name: "Ahead", icon: "Inbox").id
        let first = try await writer.patch(list, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "one"))])
        #expect(try await PostgresNodesTests.waitFor(list, at: first.revision, on: b))
        relay.resetConnections()
        let second = try await writer.patch(list, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "two"))])
        await writer.close()
        let socket = try FrameSocket(port: b.port, timeout: .seconds(30))
        try socket.handshake()
        try socket.send(.changesSince(ChangesSince(list: list, revision: second.revision, limit: 10)), id: 2)
        let (changesID, changesError) = try socket.receiveError()
        #expect(changesID == 2 && changesError.code == .unavailable, "\(changesError)")
        try socket.send(.subscribe(Subscribe(entries: [Subscribe.Entry(list: list, revision: second.revision)])), id: 3)
        let (subscribeID, subscribeError) = try socket.receiveError()
        #expect(subscribeID == 3 && subscribeError.code == .unavailable, "\(subscribeError)")
    }

    /// A node with a small feed that made a list and 12 patches of it
    /// (revision 13), stopped and started again on the same database: the
    /// restarted node, the list, and its changes as read before the restart.
    static func restartedWithAList() async throws -> (TestServer, ListID, [ListChange]) {
        let first = try TestServer.start(["--retain-bytes", "200"], store: .postgres)
        let writer = try await first.connect()
        let list = try await writer.createList(name: "Restarted", icon: "Inbox").id
        for i in 0..<12 {
            _ = try await writer.patch(list, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "item \(i)"))])
        }
        let before = try await allChanges(list, since: 0, limit: 1000, on: first)
        await writer.close()
        first.stop()
        return (try TestServer.start(["--retain-bytes", "200"], store: .postgres, postgres: first.postgres), list, before)
    }

    /// Every change of `list` after `since` on `node`, read with
    /// CHANGES_SINCE pages of `limit`.
    static func allChanges(_ list: ListID, since: Revision, limit: Int, on node: TestServer) async throws -> [ListChange] {
        let client = try await node.connect(name: "reader")
        defer { Task { await client.close() } }
        var changes: [ListChange] = []
        var from = since
        while true {
            let page = try await client.changes(of: list, since: from, limit: limit)
            #expect(page.changes.count <= limit)
            changes += page.changes
            guard let last = page.changes.last, last.revision < page.revision else { return changes }
            from = last.revision
        }
    }
}
