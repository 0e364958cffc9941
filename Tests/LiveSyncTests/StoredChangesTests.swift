import ChecklistModel
@testable import ChecklistServer
@testable import ChecklistStorage
import ChecklistStore
import ChecklistWire
import Synchronization
import Testing

/// CHANGES_SINCE answered from changes read out of a database
/// (`StoredChanges`) where the node's feed falls short: the same frames,
/// paged the same way, as a feed that holds every change.
@Suite struct StoredChangesTests {
    /// One store publishing to a hub that keeps everything and to one whose
    /// feed holds only the last few changes; `stored` is what a database
    /// would hold (every committed change, encoded like the feed's).
    final class Pair: Sendable {
        let store: Store
        let full: SubscriptionHub
        let small: SubscriptionHub
        /// Every committed change, as a database would hold them.
        let recorded = Recorded()
        let list: ListID

        init(patches: Int, maxFrameBytes: UInt32 = Limits.default.maxFrameBytes) throws {
            var tiny = LiveSyncConfiguration()
            tiny.maxRetainedBytes = 300
            let full = SubscriptionHub(maxFrameBytes: maxFrameBytes)
            let small = SubscriptionHub(configuration: tiny, maxFrameBytes: maxFrameBytes)
            let recorded = recorded
            store = Store(onCommit: { change in
                recorded.changes.withLock { $0.append(change) }
                full.publish(change)
                small.publish(change)
            })
            self.full = full
            self.small = small
            list = try store.createList(in: .default, name: "L", icon: "").id
            for i in 0..<patches {
                _ = try store.patch(in: .default, list: list, baseRevision: nil,
                                    ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "item \(i) " + String(repeating: "t", count: i * 7)))],
                                    idempotencyKey: nil)
            }
        }

        func stored(_ maxFrameBytes: UInt32) -> StoredChanges {
            .changes(recorded.changes.withLock { $0 }.map { EncodedChange($0, maxFrameBytes: maxFrameBytes) })
        }

        func answer(_ hub: SubscriptionHub, after: Revision, limit: UInt64,
                    stored: StoredChanges? = nil) throws(ChecklistError) -> (Revision, [[UInt8]]) {
            let (current, changes) = try hub.changes(of: list, after: after, limit: limit, in: .default, store: store, stored: stored)
            return (current, changes.map { Array($0.body) })
        }
    }

    final class Recorded: Sendable {
        let changes = Mutex<[Change]>([])
    }

    @Test(arguments: [Limits.default.maxFrameBytes, 600])
    func theSmallFeedWithStoredChangesAnswersLikeTheFullFeed(maxFrameBytes: UInt32) throws {
        let pair = try Pair(patches: 40, maxFrameBytes: maxFrameBytes)
        let stored = pair.stored(maxFrameBytes)
        #expect(throws: ChecklistError.self) { _ = try pair.answer(pair.small, after: 0, limit: 1000) }
        for after in Revision(0)...41 {
            for limit: UInt64 in [1, 3, 1000, .max] {
                let full = try pair.answer(pair.full, after: after, limit: limit)
                let small = try pair.answer(pair.small, after: after, limit: limit, stored: stored)
                #expect(small.0 == full.0 && small.1 == full.1, "after \(after), limit \(limit)")
            }
        }
    }

    @Test func storedChangesThatDoNotReachBackOrAnAheadClientStillResync() throws {
        let pair = try Pair(patches: 20)
        let all = pair.recorded.changes.withLock { $0 }
        let late = StoredChanges.changes(all.dropFirst(5).map { EncodedChange($0, maxFrameBytes: pair.small.maxFrameBytes) })
        for (after, stored) in [(Revision(2), late), (2, .notRetained), (2, .changes([])), (30, pair.stored(pair.small.maxFrameBytes))] {
            do {
                _ = try pair.answer(pair.small, after: after, limit: 100, stored: stored)
                Issue.record("after \(after) was answered")
            } catch {
                #expect(error.code == .resyncRequired)
                #expect(error.revision == 21)
            }
        }
    }

    /// A hub handed the same committed changes in one `publish` of all of
    /// them (a commit group, a node's batch) retains exactly what one handed
    /// them one by one does, with both feed bounds at work.
    @Test func publishingInOneCallRetainsWhatPublishingOneByOneDoes() throws {
        let pair = try Pair(patches: 40)
        let changes = pair.recorded.changes.withLock { $0 }
        var tiny = LiveSyncConfiguration()
        tiny.maxRetainedBytes = 300
        let batched = SubscriptionHub(configuration: tiny)
        batched.publish(changes[..<10])
        batched.publish(changes[10...])
        var answered = 0
        for after in Revision(0)...41 {
            let single = Result { try pair.answer(pair.small, after: after, limit: .max) }
            let batch = Result { try pair.answer(batched, after: after, limit: .max) }
            switch (single, batch) {
            case (.success(let a), .success(let b)):
                #expect(a.0 == b.0 && a.1 == b.1, "after \(after)")
                answered += 1
            case (.failure, .failure): break
            default: Issue.record("after \(after): \(single) one by one, \(batch) in one call")
            }
        }
        #expect(answered > 0)
        #expect(throws: ChecklistError.self) { _ = try pair.answer(batched, after: 0, limit: .max) }
    }
}
