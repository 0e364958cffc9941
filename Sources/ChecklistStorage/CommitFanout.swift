import ChecklistModel
import Synchronization

/// The store's one commit callback, handing each commit's changes to several
/// consumers in the order they were added: typically the write-ahead log,
/// then live sync (`SubscriptionHub.publish`).
///
/// ```swift
/// let fanout = CommitFanout()
/// let store = Store(limits: limits, onCommitGroup: fanout.onCommitGroup)
/// fanout.add(storage.append)        // whole commits: once the log is open
/// fanout.addEach(hub.publish)       // one change at a time
/// ```
///
/// A commit is the changes one store operation made atomically: one for a
/// request, several for an import. Consumers that must keep a commit whole
/// (the log writes it as one record) take the group; the others take its
/// changes one by one.
///
/// Each consumer runs under the store's lock, in commit order (so per list
/// in revision order): keep it short and never call the store from it. A
/// consumer added later sees only later commits. Pushes do not wait for the
/// log to be durable: a server that holds answers until the log is synced
/// does that apart from this.
public final class CommitFanout: Sendable {
    public typealias Consumer = @Sendable ([Change]) -> Void

    private let consumers: Mutex<[Consumer]>

    public init(_ consumers: [Consumer] = []) {
        self.consumers = Mutex(consumers)
    }

    /// Adds a consumer of whole commits after the ones already there.
    public func add(_ consumer: @escaping Consumer) {
        consumers.withLock { $0.append(consumer) }
    }

    /// Adds a consumer of single changes: it gets a commit's changes one
    /// after the other, in order.
    public func addEach(_ consumer: @escaping @Sendable (Change) -> Void) {
        add { changes in changes.forEach(consumer) }
    }

    /// Hands one commit's `changes` to every consumer, in order.
    public func deliver(_ changes: [Change]) {
        for consumer in consumers.withLock({ $0 }) { consumer(changes) }
    }

    /// `deliver` as a closure, for `Store(onCommitGroup:)`.
    public var onCommitGroup: @Sendable ([Change]) -> Void {
        { [self] changes in deliver(changes) }
    }
}
