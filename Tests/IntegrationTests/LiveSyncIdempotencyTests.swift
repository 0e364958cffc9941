import ChecklistClient
import ChecklistSocket
import ChecklistTesting
import Foundation
import Testing

extension LiveSyncIntegration {
    /// Exactly-once patches against the real server: a patch whose answer is
    /// lost is sent again with the same idempotency key and applied once, also
    /// across a restart of the server.
    @Suite(.timeLimit(.minutes(2)))
    struct LiveSyncIdempotencyTests {
        static let ops: [PatchOperation] = [
            .insert(tempRef: 1, position: .end, fields: ItemFields(text: "Milk")),
            .insert(tempRef: 2, position: .after(.temp(1)), fields: ItemFields(text: "Eggs")),
        ]

        /// At the byte level: the client sends the PATCH and hangs up without
        /// reading the answer; the retry, on a new connection, gets the original
        /// answer, and the list has the items once.
        @Test func aRetryOfAPatchWhoseAnswerWasLostIsAnsweredNotApplied() async throws {
            let server = try await TestServer.launch()
            defer { server.stopInBackground() }
            let reader = try await server.connect()
            let list = try await reader.createList(name: "Groceries")
            let key = IdempotencyKey(client: 0xC0FFEE, sequence: 1)
            let patch = Request.patch(Patch(list: list.id, idempotencyKey: key, ops: Self.ops))

            let first = try RawConnection(port: server.port)
            try first.handshake()
            try first.send(patch, id: 7)
            // Half-close and wait for the server to finish with the connection
            // (it closes after answering what it read); the bytes it sends are
            // thrown away unread: the answer is lost.
            try shutdownSocket(first.fd, .write)
            while try first.readMore() == .data {}

            let second = try RawConnection(port: server.port)
            try second.handshake()
            try second.send(patch, id: 8)
            let (header, answer) = try second.receive()
            #expect(header.requestID == 8)
            guard case .patchOK(let ok) = answer else { throw TestFailure("expected PATCH_OK, got \(answer)") }
            #expect(ok.revision == 2)
            #expect(ok.ids.map(\.tempRef) == [1, 2])
            let page = try await reader.page(list.id, limit: 10)
            #expect(page.revision == 2)
            #expect(page.items.map(\.text) == ["Milk", "Eggs"])
            #expect(page.items.map(\.id) == ok.ids.map(\.id))
            await reader.close()
        }

        /// Through the client library: the connection is cut right after the
        /// server answered (the answer never reaches the client); `ChecklistSync`
        /// reconnects and retries with the same key, and the patch is applied once.
        @Test func theClientLibraryRetriesWithTheSameKeyAndThePatchIsAppliedOnce() async throws {
            let server = try await TestServer.launch()
            defer { server.stopInBackground() }
            let proxy = try AnswerCuttingProxy(upstreamPort: server.port)
            defer { proxy.stop() }
            let reader = try await server.connect()
            let list = try await reader.createList(name: "Groceries")
            let proxyPort = proxy.port
            let sync = ChecklistSync(retry: .init(initialBackoff: .milliseconds(5))) {
                try await ChecklistConnection.connect(host: "127.0.0.1", port: proxyPort, clientName: "retrying")
            }
            let ok = try await sync.patch(list.id, ops: Self.ops)
            #expect(proxy.cuts == 1)
            #expect(ok.revision == 2)
            let page = try await reader.page(list.id, limit: 10)
            #expect(page.revision == 2)
            #expect(page.items.map(\.text) == ["Milk", "Eggs"])
            #expect(page.items.map(\.id) == ok.ids.map(\.id))
            // The next patch gets the next key and is applied.
            let next = try await sync.patch(list.id, ops: [.toggle(.id(ok.ids[0].id))])
            #expect(next.revision == 3)
            await sync.close()
            await reader.close()
        }

        /// The same across a crash of the server: the key is in the log with the
        /// change, so the restarted server still answers the retry.
        @Test func aRetryAfterTheServerRestartedIsStillAnsweredNotApplied() async throws {
            let server = try await TestServer.launch(["--fsync", "always"])
            var restarted: TestServer?
            defer { (restarted ?? server).stopInBackground() }
            let key = IdempotencyKey(client: 77, sequence: 5)
            let list: ListSummary
            let original: PatchOK
            do {
                let a = try await server.connect()
                list = try await a.createList(name: "Groceries")
                original = try await a.patch(list.id, idempotencyKey: key, ops: Self.ops)
                await a.close()
            }
            try await BlockingWork.run { server.crash() }
            restarted = try await TestServer.launch(["--fsync", "always"], directory: server.directory)
            let b = try await restarted!.connect()
            #expect(try await b.lists().contains { $0.id == list.id }, "the durable log keeps the list across the crash")
            let retry = try await b.patch(list.id, idempotencyKey: key, ops: Self.ops)
            #expect(retry == original)
            let page = try await b.page(list.id, limit: 10)
            #expect(page.revision == 2 && page.items.map(\.text) == ["Milk", "Eggs"])
            await b.close()
        }

        /// The same when the patch is older than the newest snapshot: replay
        /// starts after the snapshot, so the key comes back only from the
        /// snapshot's IDEMPOTENCY records (Protocol/SNAPSHOT.md section 3.8).
        /// A later patch, in the log after the snapshot, is answered too.
        @Test func aRetryOfAPatchOlderThanTheNewestSnapshotIsAnsweredAfterARestart() async throws {
            let arguments = ["--fsync", "always", "--snapshot-after", "3"]
            let server = try await TestServer.launch(arguments)
            var restarted: TestServer?
            defer { (restarted ?? server).stopInBackground() }
            let old = IdempotencyKey(client: 0xBEEF, sequence: 1)
            let recent = IdempotencyKey(client: 0xBEEF, sequence: 2)
            let recentOps: [PatchOperation] = [.insert(tempRef: 3, position: .index(0), fields: ItemFields(text: "Bread"))]
            let list: ListSummary
            let original: PatchOK
            let later: PatchOK
            do {
                let a = try await server.connect()
                list = try await a.createList(name: "Groceries")                       // LSN 1
                original = try await a.patch(list.id, idempotencyKey: old, ops: Self.ops)  // LSN 2
                _ = try await a.updateList(list.id, name: "Shopping")                   // LSN 3: the compactor's cue
                // The background snapshot covers LSN 3, so the keyed patch; recovery replays only what follows it.
                let seen = try await BlockingWork.run {
                    server.process.waitForStandardError(containing: "event=snapshot ", timeout: .seconds(60))
                }
                try #require(seen, "no snapshot was written:\n\(server.process.standardError)")
                let snapshots = try FileManager.default.contentsOfDirectory(atPath: server.directory.path)
                    .filter { $0.hasPrefix("snapshot-") && $0.hasSuffix(".ckss.gz") }
                #expect(snapshots.contains { UInt64($0.dropFirst(9).prefix(16), radix: 16).map { $0 >= 2 } ?? false },
                        "a snapshot at or after the patch's LSN 2: \(snapshots)")
                later = try await a.patch(list.id, idempotencyKey: recent, ops: recentOps)  // LSN 4, after the snapshot
                await a.close()
            }
            try await BlockingWork.run { server.crash() }
            let second = try await TestServer.launch(arguments, directory: server.directory)
            restarted = second
            let recovered = try await BlockingWork.run {
                second.process.waitForStandardError(containing: "event=recovered ", timeout: .seconds(30))
            }
            #expect(recovered)
            #expect(second.process.standardError.contains(" keys=1 "), "one key restored from the snapshot")
            let b = try await second.connect()
            let retry = try await b.patch(list.id, idempotencyKey: old, ops: Self.ops)
            #expect(retry == original, "the retry of the patch the snapshot holds is answered, not applied")
            let retryLater = try await b.patch(list.id, idempotencyKey: recent, ops: recentOps)
            #expect(retryLater == later, "the retry of the patch in the log after the snapshot is answered")
            let page = try await b.page(list.id, limit: 10)
            #expect(page.revision == 4)
            #expect(page.items.map(\.text) == ["Bread", "Milk", "Eggs"])
            #expect(page.items.map(\.id) == later.ids.map(\.id) + original.ids.map(\.id))
            await b.close()
        }
    }
}
