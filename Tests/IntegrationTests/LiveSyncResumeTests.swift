import ChecklistClient
import ChecklistTesting
import Testing

extension LiveSyncIntegration {
    /// Resuming: a subscriber that was away catches up from its revision and
    /// ends with exactly the writer's list; past the retention it is told to
    /// read the list again instead.
    @Suite(.timeLimit(.minutes(3)))
    struct LiveSyncResumeTests {
        /// B follows a list, goes away, A makes 1,000 changes, B resumes from its
        /// revision: pushed as catch-up by default, or, with a push buffer too
        /// small for it, fetched with CHANGES_SINCE.
        @Test(arguments: [[], ["--max-push-buffer", "16384"]])
        func aSubscriberThatWasAwayCatchesUpExactly(serverArguments: [String]) async throws {
            let server = try await TestServer.launch(serverArguments)
            defer { server.stopInBackground() }
            let a = try await server.connect(name: "A")
            let list = try await a.createList(name: "Shared")
            let port = server.port
            let connect: ChecklistSync.Connect = {
                try await ChecklistConnection.connect(host: "127.0.0.1", port: port, clientName: "B")
            }
            var ids: [ItemID] = []
            var rng = SystemRandomNumberGenerator()
            func change(_ n: Int) async throws {
                for i in 0..<n {
                    let ok = try await a.patch(list.id, ops: randomOps(&ids, &rng, tag: "c\(i)"))
                    ids = try await ListReplica.read(list.id, on: a).items.map(\.id)
                    _ = ok
                }
            }
            // B follows the first 20 changes, then goes away.
            var replica = ListReplica(revision: 1)
            do {
                let sync = ChecklistSync(connect: connect)
                var events = sync.subscribe([list.id], from: [list.id: 1]).makeAsyncIterator()
                try await change(20)
                while replica.revision < 21 {
                    guard let event = await events.next() else { throw TestFailure("ended") }
                    if case .change(let c) = event { try replica.apply(c) }
                }
                await sync.close()
            }
            // A makes 1,000 changes, pipelined.
            var requests: [Request] = []
            for i in 0..<1000 {
                requests.append(.patch(Patch(list: list.id, ops: [.insert(tempRef: nil, position: .index(UInt64(i % 7)),
                                                                          fields: ItemFields(text: "offline \(i)"))])))
            }
            for answer in try await a.send(batch: requests) {
                guard case .patchOK = answer else { throw TestFailure("\(answer)") }
            }
            let final = replica.revision + 1000
            // B comes back from its revision and ends with exactly A's state.
            let sync = ChecklistSync(connect: connect)
            var events = sync.subscribe([list.id], from: [list.id: replica.revision]).makeAsyncIterator()
            while replica.revision < final {
                guard let event = await events.next() else { throw TestFailure("ended") }
                switch event {
                case .change(let c): try replica.apply(c)
                case .resyncRequired: throw TestFailure("catch-up should be possible: \(event)")
                default: break
                }
            }
            #expect(replica == (try await ListReplica.read(list.id, on: a)))
            await sync.close()
            await a.close()
        }

        /// The retained changes reach back past a restart: those replayed from
        /// the log at start are retained like new ones, so a client that was
        /// at an old revision catches up instead of refetching the list.
        @Test func changesSinceReachesBackPastARestart() async throws {
            let server = try await TestServer.launch(["--fsync", "always"])
            var restarted: TestServer?
            defer { (restarted ?? server).stopInBackground() }
            let list: ListSummary
            do {
                let a = try await server.connect(name: "A")
                list = try await a.createList(name: "Shared")
                for i in 0..<30 {
                    try await a.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "before \(i)"))])
                }
                await a.close()
            }
            try await BlockingWork.run { server.crash() }
            restarted = try await TestServer.launch(["--fsync", "always"], directory: server.directory)
            let b = try await restarted!.connect(name: "B")
            try await b.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "after"))])
            let changes = try await b.changes(of: list.id, since: 5)
            #expect(changes.revision == 32)
            #expect(changes.changes.map(\.revision) == Array(6...32))
            var texts: [String] = []
            for change in changes.changes {
                guard case .patched(let ops) = change.kind, case .insert(_, _, let fields) = ops.first else { continue }
                texts.append(fields.text)
            }
            #expect(texts == (4..<30).map { "before \($0)" } + ["after"])
            await b.close()
        }

        /// The library resumes by itself: the connection is cut under a live
        /// subscription, A goes on committing, and the stream goes on after an
        /// `.interrupted` from the last revision it reported, with no gap and no
        /// duplicate, to exactly A's state.
        @Test func theLibraryResubscribesAfterALostConnectionFromItsLastRevision() async throws {
            let server = try await TestServer.launch()
            defer { server.stopInBackground() }
            let proxy = try AnswerCuttingProxy(upstreamPort: server.port, cutFirstAnswer: false)
            defer { proxy.stop() }
            let a = try await server.connect(name: "A")
            let list = try await a.createList(name: "Shared")
            let proxyPort = proxy.port
            let sync = ChecklistSync(retry: .init(initialBackoff: .milliseconds(5))) {
                try await ChecklistConnection.connect(host: "127.0.0.1", port: proxyPort, clientName: "B")
            }
            var events = sync.subscribe([list.id], from: [list.id: 1]).makeAsyncIterator()
            #expect(await events.next() == .subscribed([list.id: 1]))
            var replica = ListReplica(revision: 1)
            func add(_ n: Int, _ tag: String) async throws {
                for i in 0..<n {
                    try await a.patch(list.id, ops: [.insert(tempRef: nil, position: .index(UInt64(i % 3)),
                                                             fields: ItemFields(text: "\(tag) \(i)"))])
                }
            }
            func follow(to revision: Revision) async throws -> [ChangeEvent] {
                var others: [ChangeEvent] = []
                while replica.revision < revision {
                    guard let event = await events.next() else { throw TestFailure("the stream ended") }
                    if case .change(let change) = event { try replica.apply(change) } else { others.append(event) }
                }
                return others
            }
            try await add(10, "before")
            #expect(try await follow(to: 11).isEmpty)
            proxy.cutAll()
            try await add(300, "during")
            let others = try await follow(to: 311)
            #expect(others.contains { if case .interrupted = $0 { true } else { false } })
            #expect(others.contains { if case .subscribed = $0 { true } else { false } })
            #expect(replica == (try await ListReplica.read(list.id, on: a)))
            await sync.close()
            await a.close()
        }

        /// With `--retain-changes 10`, 50 changes later the feed no longer has
        /// them: CHANGES_SINCE is RESYNC_REQUIRED with the current revision, and a
        /// resumed subscription says so, then goes on with live changes.
        @Test func pastTheRetentionTheClientIsToldToResync() async throws {
            let server = try await TestServer.launch(["--retain-changes", "10"])
            defer { server.stopInBackground() }
            let a = try await server.connect(name: "A")
            let list = try await a.createList(name: "Busy")
            for i in 0..<50 {
                try await a.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "\(i)"))])
            }
            let b = try await server.connect(name: "B")
            let error = await #expect(throws: ClientError.self) { _ = try await b.changes(of: list.id, since: 1) }
            #expect(error?.wireCode == .resyncRequired)
            #expect(error?.serverError?.revision == 51)
            // Within the retention it is answered, paged.
            let recent = try await b.changes(of: list.id, since: 45, limit: 3)
            #expect(recent.revision == 51 && recent.changes.map(\.revision) == [46, 47, 48])

            let port = server.port
            let sync = ChecklistSync { try await ChecklistConnection.connect(host: "127.0.0.1", port: port, clientName: "B") }
            var events = sync.subscribe([list.id], from: [list.id: 1]).makeAsyncIterator()
            #expect(await events.next() == .resyncRequired(list: list.id, revision: 51))
            #expect(await events.next() == .subscribed([list.id: 51]))
            try await a.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "live"))])
            guard case .change(let next)? = await events.next() else { throw TestFailure("no live change") }
            #expect(next.revision == 52)
            await sync.close()
            await a.close()
            await b.close()
        }
    }
}
