import ChecklistModel
import Synchronization

/// The store's one `onCommit`, handing each committed change to several
/// consumers in the order they were added: typically the write-ahead log,
/// then live sync (`SubscriptionHub.publish`).
///
/// ```swift
/// let fanout = CommitFanout()
/// let store = Store(limits: limits, onCommit: fanout.onCommit)
/// fanout.add(log.append)      // once the log is open (after recovery)
/// fanout.add(hub.publish)
/// ```
///
/// Each consumer runs under the store's lock, in commit order (so per list
/// in revision order): keep it short and never call the store from it. A
/// consumer added later sees only later changes. Pushes do not wait for the
/// log to be durable: a server that holds answers until the log is synced
/// does that apart from this.
public final class CommitFanout: Sendable {
    public typealias Consumer = @Sendable (Change) -> Void

    private let consumers: Mutex<[Consumer]>

    public init(_ consumers: [Consumer] = []) {
        self.consumers = Mutex(consumers)
    }

    /// Adds a consumer after the ones already there.
    public func add(_ consumer: @escaping Consumer) {
        consumers.withLock { $0.append(consumer) }
    }

    /// Hands `change` to every consumer, in order.
    public func deliver(_ change: Change) {
        for consumer in consumers.withLock({ $0 }) { consumer(change) }
    }

    /// `deliver` as a closure, for `Store(onCommit:)`.
    public var onCommit: @Sendable (Change) -> Void {
        { [self] change in deliver(change) }
    }
}
