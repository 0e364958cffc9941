import ChecklistClient
import Testing

extension LiveSyncIntegration {
    /// A subscriber that never reads is cut at `--max-push-buffer` with
    /// SUBSCRIPTION_DROPPED; a subscriber that reads gets every change, and the
    /// dropped one resumes from its revision.
    @Suite(.timeLimit(.minutes(2)))
    struct LiveSyncSlowSubscriberTests {
        @Test func aSubscriberThatNeverReadsIsCutAtTheLimitOthersAreNot() async throws {
            let server = try await TestServer.launch(["--max-push-buffer", "65536"])
            defer { server.stopInBackground() }
            let a = try await server.connect(name: "A")
            let list = try await a.createList(name: "Busy")
            try await a.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "row"))])

            let slow = try RawConnection(port: server.port)
            try slow.handshake()
            try slow.send(.subscribe(Subscribe(entries: [Subscribe.Entry(list: list.id)])), id: 2)
            guard case .subscribed = try slow.receive().1 else { throw TestFailure("no SUBSCRIBED") }

            let fast = try await server.connect(name: "fast")
            let pushes = fast.livePushes()
            _ = try await fast.subscribe([Subscribe.Entry(list: list.id)])
            var iterator = pushes.makeAsyncIterator()

            // 400 changes of about 20 KB: 8 MB, more than the kernel buffers of a
            // socket that is never read. Each is committed once the reading
            // subscriber has the one before.
            let text = String(repeating: "t", count: 3990)
            let changes = 400
            for i in 0..<changes {
                try await a.patch(list.id, ops: (0..<5).map { .setText(.id(ItemID(1)), text + "\(i)-\($0)") })
                guard case .change(let change)? = await iterator.next() else {
                    throw TestFailure("the reading subscriber lost its subscription after \(i) changes")
                }
                #expect(change.revision == Revision(3 + i))
            }

            let (received, dropped) = try slow.receivePushesUntilDropped()
            #expect(dropped.reason == .slowConsumer)
            #expect(received.count < changes)
            #expect(received == received.indices.map { Revision(3 + $0) })
            // The connection still answers, and no push follows the drop.
            try slow.send(.ping(Ping(data: [1])), id: 3)
            guard case .pong = try slow.receive().1 else { throw TestFailure("a push followed SUBSCRIPTION_DROPPED") }
            // It resumes from the last revision it has.
            let last = received.last ?? 2
            try slow.send(.subscribe(Subscribe(entries: [Subscribe.Entry(list: list.id, revision: last)])), id: 4)
            guard case .subscribed(let again) = try slow.receive().1 else { throw TestFailure("no SUBSCRIBED") }
            #expect(again.entries.map(\.revision) == [Revision(2 + changes)])
            // Megabytes behind: more than it pushes at once, so the client fetches them.
            #expect(again.entries.map(\.status) == [.fetch])
            try slow.send(.changesSince(ChangesSince(list: list.id, revision: last, limit: 1000)), id: 5)
            guard case .changes(let page) = try slow.receive().1 else { throw TestFailure("no CHANGES") }
            #expect(page.changes.first?.revision == last + 1)
            #expect(page.changes.count < changes)  // one frame's worth: paged
            await fast.close()
            await a.close()
        }
    }
}
