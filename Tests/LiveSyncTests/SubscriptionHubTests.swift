import ChecklistClient
@testable import ChecklistServer
@testable import ChecklistStorage
import ChecklistStore
import ChecklistTesting
import Synchronization
import Testing

/// The hub inside a real server: subscriptions start exactly between two
/// commits while writers run, unsubscribing stops pushes, a subscriber that
/// does not read is dropped at its push buffer while others go on, and the
/// fan-out hands changes to its consumers in order.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct SubscriptionHubTests {
    /// Subscribers join from older revisions while two writers commit: each
    /// receives every revision after its own exactly once, in order. The
    /// writers themselves send the SUBSCRIBEs at set points, so subscriptions
    /// start while commits are in flight.
    @Test func catchUpAndLivePushesJoinWithoutGapOrDuplicate() async throws {
        var config = LiveSyncConfiguration()
        config.retainChangesPerList = 100_000  // a SUBSCRIBE may run long after its revision was read
        let server = try InProcessServer(liveSync: config)
        defer { server.stop() }
        let ns = Namespace.default
        let list = try server.store.createList(in: ns, name: "Shared", icon: "")
        _ = try server.store.patch(in: ns, list: list.id, baseRevision: nil,
                                   ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "row"))])
        let perWriter = 1500
        let final = Revision(2 + 2 * perWriter)
        let subscriberCount = 6
        var connections: [(ChecklistConnection, AsyncStream<LivePush>)] = []
        for _ in 0..<subscriberCount {
            let connection = try await server.connect()
            connections.append((connection, connection.livePushes()))
        }
        typealias Join = Task<(from: Revision, status: Subscribed.Status), Error>
        let subscribers = connections
        let started = try await withThrowingTaskGroup(of: [Join].self) { group in
            for w in 0..<2 {
                group.addTask {
                    var joins: [Join] = []
                    for i in 0..<perWriter {
                        _ = try server.store.patch(in: ns, list: list.id, baseRevision: nil,
                                                   ops: [.setText(.id(ItemID(1)), "w\(w) #\(i)")])
                        if w == 0, i % 200 == 100, i / 200 < subscriberCount {
                            let (connection, _) = subscribers[i / 200]
                            let from = try server.store.summary(in: ns, list: list.id).revision - Revision(i / 200 % 3)
                            joins.append(Task {
                                let answer = try await connection.subscribe([Subscribe.Entry(list: list.id, revision: from)])
                                return (from, answer.entries[0].status)
                            })
                        }
                    }
                    return joins
                }
            }
            var all: [Join] = []
            for try await joins in group { all += joins }
            return all
        }
        #expect(started.count == subscriberCount)
        for (join, (connection, pushes)) in zip(started, connections) {
            let (from, status) = try await join.value
            #expect(status == .live)
            var seen: [Revision] = []
            if from < final {
                for await push in pushes {
                    guard case .change(let change) = push else { continue }
                    seen.append(change.revision)
                    if change.revision == final { break }
                }
            }
            #expect(seen == (from < final ? Array((from + 1)...final) : []), "from \(from): \(seen.count) pushes")
            await connection.close()
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
        let slow = try FrameSocket(port: server.server.port)
        try slow.handshake()
        try slow.send(.subscribe(Subscribe(entries: [Subscribe.Entry(list: list.id)])), id: 2)
        guard case .subscribed = try slow.receive().1 else { throw TestFailure("no SUBSCRIBED") }
        let fast = try await server.connect()
        let pushes = fast.livePushes()
        _ = try await fast.subscribe([Subscribe.Entry(list: list.id)])

        // 400 pushes of about 20 KB: 8 MB, more than the kernel buffers hold for a
        // socket that is never read (its receive buffer does not grow: ~4 MB in all).
        // The reading subscriber keeps up (each change is committed once it
        // has the previous one), so only the one that never reads falls behind.
        let changes = 400
        var revisions: [Revision] = []
        var iterator = pushes.makeAsyncIterator()
        for i in 0..<changes {
            _ = try server.store.patch(in: .default, list: list.id, baseRevision: nil, ops: textOps(5, textBytes: 4000, tag: i))
            guard case .change(let change)? = await iterator.next() else {
                Issue.record("the reading subscriber was dropped after \(revisions.count) changes")
                break
            }
            revisions.append(change.revision)
        }
        #expect(revisions == Array(3...Revision(2 + changes)))

        // The slow one: some pushes in order, then SUBSCRIPTION_DROPPED, then nothing but answers.
        let (received, dropped) = try slow.receivePushesUntilDropped()
        #expect(dropped.reason == .slowConsumer)
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
        let fanout = CommitFanout([{ changes in seen.withLock { $0.append("log \(changes.map(\.revision))") } }])
        let store = Store(onCommitGroup: fanout.onCommitGroup)
        let list = try store.createList(in: .default, name: "L", icon: "")
        fanout.addEach { change in seen.withLock { $0.append("push \(change.revision)") } }
        _ = try store.updateList(in: .default, list: list.id, name: "M", icon: nil)
        #expect(seen.withLock { $0 } == ["log [1]", "log [2]", "push 2"])
    }
}
