import ChecklistEventLoop
import ChecklistModel
import ChecklistWire
import Synchronization

/// The pushes waiting for the subscribers of one event loop. Publishers
/// append under a small lock and wake the loop once per batch; the loop
/// drains everything queued in one task and writes it, so a burst of
/// commits reaches a loop's subscribers in one pass, and each connection's
/// writes go out with the loop's end-of-batch flush.
final class LoopOutbox: Sendable {
    enum Item: Sendable {
        /// One change for these subscribers of this loop (encoded once).
        case push(EncodedChange, [Subscriber])
        /// The subscriber's queue overflowed at publish time: drop it, if
        /// its subscriptions are still the ones of `epoch`.
        case overflow(Subscriber, epoch: UInt64)
    }

    private struct Queue {
        var items: [Item] = []
        /// A drain task is queued on the loop and has not taken the items yet.
        var scheduled = false
    }

    let loop: EventLoop
    private let queue = Mutex(Queue())

    init(loop: EventLoop) {
        self.loop = loop
    }

    /// Queues `item`; returns true when the caller must wake the loop
    /// (`schedule(hub:)`), i.e. no drain is pending yet.
    func enqueue(_ item: Item) -> Bool {
        queue.withLock { q in
            q.items.append(item)
            if q.scheduled { return false }
            q.scheduled = true
            return true
        }
    }

    /// Queues the drain task on the loop.
    func schedule(hub: SubscriptionHub) {
        loop.execute { [self] in drain(hub: hub) }
    }

    /// Writes everything queued. Loop thread only.
    func drain(hub: SubscriptionHub) {
        let items = queue.withLock { q in
            q.scheduled = false
            var items: [Item] = []
            swap(&items, &q.items)
            return items
        }
        for item in items {
            switch item {
            case .push(let change, let subscribers):
                for subscriber in subscribers {
                    subscriber.queuedBytes.subtract(change.frame.count, ordering: .relaxed)
                    subscriber.deliver(change, hub: hub)
                }
            case .overflow(let subscriber, let epoch):
                guard subscriber.local.value.epoch == epoch else { continue }
                subscriber.drop(hub: hub, pending: subscriber.handle.connection.pendingOutputBytes
                                    + subscriber.queuedBytes.load(ordering: .relaxed))
            }
        }
    }
}
