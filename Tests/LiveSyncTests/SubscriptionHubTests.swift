import ChecklistClient
@testable import ChecklistServer
import ChecklistStore
import Synchronization
import Testing

/// The hub inside a real server: subscriptions start exactly between two
/// commits while writers run, unsubscribing stops pushes, a subscriber that
/// does not read is dropped at its push buffer while others go on, and the
/// fan-out hands changes to its consumers in order.
@Suite(.timeLimit(.minutes(2)))
struct SubscriptionHubTests {
    /// Subscribers join from older revisions while two writers commit: each
    /// receives every revision after its own exactly once, in order.
    @Test func catchUpAndLivePushesJoinWithoutGapOrDuplicate() async throws {
        let server = try InProcessServer()
        defer { server.stop() }
        let ns = Namespace.default
        let list = try server.store.createList(in: ns, name: "Shared", icon: "")
        _ = try server.store.patch(in: ns, list: list.id, baseRevision: nil,
                                   ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "row"))])
        let perWriter = 400
        let final = Revision(2 + 2 * perWriter)
        let writers = Task.detached {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for w in 0..<2 {
                    group.addTask {
                        for i in 0..<perWriter {
                            _ = try server.store.patch(in: ns, list: list.id, baseRevision: nil,
                                                       ops: [.setText(.id(ItemID(1)), "w\(w) #\(i)")])
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        var subscribers: [(from: Revision, task: Task<[Revision], Error>)] = []
        for n in 0..<6 {
            let from = try server.store.summary(in: ns, list: list.id).revision - Revision(n % 3)
            let connection = try await server.connect()
            let pushes = connection.livePushes()
            let answer = try await connection.subscribe([Subscribe.Entry(list: list.id, revision: from)])
            #expect(answer.entries.map(\.status) == [.live])
            subscribers.append((from, Task {
                var seen: [Revision] = []
                if from == final {  // joined after the last commit: nothing to push
                    await connection.close()
                    return seen
                }
                for await push in pushes {
                    guard case .change(let change) = push else { continue }
                    seen.append(change.revision)
                    if change.revision == final { break }
                }
                await connection.close()
                return seen
            }))
        }
        try await writers.value
        for (from, task) in subscribers {
            let seen = try await task.value
            #expect(seen == (from < final ? Array((from + 1)...final) : []), "from \(from): \(seen.count) pushes")
        }
    }

    /// After UNSUBSCRIBED no push for the list follows: a later change of
    /// another subscribed list is the next push.
    @Test func unsubscribingStopsThePushes() async throws {
        let server = try InProcessServer()
        defer { server.stop() }
        let a = try server.store.createList(in: .default, name: "A", icon: "")
        let b = try server.store.createList(in: .default, name: "B", icon: "")
        let connection = try await server.connect()
        let pushes = connection.livePushes()
        _ = try await connection.subscribe([Subscribe.Entry(list: a.id), Subscribe.Entry(list: b.id)])
        try await connection.unsubscribe([a.id])
        _ = try server.store.updateList(in: .default, list: a.id, name: "A2", icon: nil)
        _ = try server.store.updateList(in: .default, list: b.id, name: "B2", icon: nil)
        var iterator = pushes.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first == .change(ListChange(list: b.id, revision: 2, kind: .listUpdated(name: "B2", icon: ""))))
        await connection.close()
        #expect(server.hub.statistics.changesPublished == 4)
    }

    /// A subscriber that never reads is dropped once its unsent pushes pass
    /// the push buffer; it gets SUBSCRIPTION_DROPPED and nothing after it,
    /// while a reading subscriber receives every change.
    @Test func aSubscriberThatNeverReadsIsDroppedOthersAreNot() async throws {
        var config = LiveSyncConfiguration()
        config.maxPushBufferBytes = 64 << 10
        let server = try InProcessServer(liveSync: config)
        defer { server.stop() }
        let list = try server.store.createList(in: .default, name: "Busy", icon: "")
        _ = try server.store.patch(in: .default, list: list.id, baseRevision: nil,
                                   ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "row"))])
        let slow = try FrameSocket(port: server.server.port, receiveBuffer: 4096)
        try slow.handshake()
        try slow.send(.subscribe(Subscribe(entries: [Subscribe.Entry(list: list.id)])), id: 2)
        guard case .subscribed = try slow.receive().1 else { throw TestFailure("no SUBSCRIBED") }
        let fast = try await server.connect()
        let pushes = fast.livePushes()
        _ = try await fast.subscribe([Subscribe.Entry(list: list.id)])

        // 300 pushes of about 20 KB: 6 MB, more than the kernel buffers hold.
        let changes = 300
        for i in 0..<changes {
            _ = try server.store.patch(in: .default, list: list.id, baseRevision: nil, ops: textOps(5, textBytes: 4000, tag: i))
        }
        var revisions: [Revision] = []
        for await push in pushes {
            guard case .change(let change) = push else { Issue.record("the reading subscriber was dropped"); break }
            revisions.append(change.revision)
            if revisions.count == changes { break }
        }
        #expect(revisions == Array(3...Revision(2 + changes)))

        // The slow one: some pushes in order, then SUBSCRIPTION_DROPPED, then nothing but answers.
        // (Reading megabytes through a 4 KiB receive buffer would crawl: widen it first.)
        slow.setReceiveBuffer(4 << 20)
        var received: [Revision] = []
        var dropped: SubscriptionDropped?
        while dropped == nil {
            switch try slow.receive().1 {
            case .changePush(let push): received.append(push.change.revision)
            case .subscriptionDropped(let message): dropped = message
            case let other: throw TestFailure("unexpected \(other.type)")
            }
        }
        #expect(dropped?.reason == .slowConsumer)
        #expect(received.count < changes)
        #expect(received == Array(received.indices.map { Revision(3 + $0) }))
        try slow.send(.ping(Ping(data: [7])), id: 3)
        guard case .pong = try slow.receive().1 else { throw TestFailure("a push followed SUBSCRIPTION_DROPPED") }
        let statistics = server.hub.statistics
        #expect(statistics.subscribersDropped == 1)
        #expect(statistics.subscribers == 1)
        await fast.close()
    }

    @Test func theFanoutHandsEveryChangeToEveryConsumerInOrder() throws {
        let seen = Mutex<[String]>([])
        let fanout = CommitFanout([{ change in seen.withLock { $0.append("log \(change.revision)") } }])
        let store = Store(onCommit: fanout.onCommit)
        let list = try store.createList(in: .default, name: "L", icon: "")
        fanout.add { change in seen.withLock { $0.append("push \(change.revision)") } }
        _ = try store.updateList(in: .default, list: list.id, name: "M", icon: nil)
        #expect(seen.withLock { $0 } == ["log 1", "log 2", "push 2"])
    }
}
