import ChecklistModel
import Synchronization

/// The store's one commit callback, handing each commit's changes to several
/// consumers in the order they were added: typically the write-ahead log,
/// then live sync (`SubscriptionHub.publish`).
///
/// ```swift
/// let fanout = CommitFanout()
/// let store = Store(limits: limits, onCommitGroup: fanout.onCommitGroup, onCommitEach: fanout.onCommitEach)
/// fanout.add(storage.append, each: storage.appendEach)  // whole commits: once the log is open
/// fanout.addEach(hub.publish)       // one change at a time
/// ```
///
/// A commit is the changes one store operation made atomically: one for a
/// request, several for an import. Consumers that must keep a commit whole
/// (the log writes it as one record) take the group; the others take its
/// changes one by one. A batch of patches (`Store.patch(in:batch:into:)`)
/// is several commits of one change each, handed over together
/// (`deliverEach`): the log appends their records in one go, live sync
/// publishes them at once.
///
/// Each consumer runs under the store's lock, in commit order (so per list
/// in revision order): keep it short and never call the store from it. A
/// consumer added later sees only later commits. Pushes do not wait for the
/// log to be durable: a server that holds answers until the log is synced
/// does that apart from this.
public final class CommitFanout: Sendable {
    public typealias Consumer = @Sendable ([Change]) -> Void

    /// A consumer: of one commit at a time (`whole`), and, when it has one,
    /// its form for several commits of one change each (`each`).
    private struct Entry {
        let whole: Consumer
        let each: Consumer?
    }

    private let consumers: Mutex<[Entry]>

    public init(_ consumers: [Consumer] = []) {
        self.consumers = Mutex(consumers.map { Entry(whole: $0, each: nil) })
    }

    /// Adds a consumer of whole commits after the ones already there;
    /// `each`, when given, takes the commits of a batch of patches in one
    /// call, one change a commit, in order (`deliverEach`); without it
    /// `consumer` gets them one commit at a time.
    public func add(_ consumer: @escaping Consumer, each: Consumer? = nil) {
        consumers.withLock { $0.append(Entry(whole: consumer, each: each)) }
    }

    /// Adds a consumer of single changes: it gets a commit's changes one
    /// after the other, in order (a batch's too).
    public func addEach(_ consumer: @escaping @Sendable (Change) -> Void) {
        let flat: Consumer = { changes in changes.forEach(consumer) }
        add(flat, each: flat)
    }

    /// Hands one commit's `changes` to every consumer, in order.
    public func deliver(_ changes: [Change]) {
        for entry in consumers.withLock({ $0 }) { entry.whole(changes) }
    }

    /// Hands several commits of one change each (`changes`, in commit
    /// order: a batch of patches) to every consumer, in order: in one call
    /// to those that take them so, else one commit at a time.
    public func deliverEach(_ changes: [Change]) {
        for entry in consumers.withLock({ $0 }) {
            if let each = entry.each {
                each(changes)
            } else {
                for change in changes { entry.whole([change]) }
            }
        }
    }

    /// `deliver` as a closure, for `Store(onCommitGroup:)`.
    public var onCommitGroup: @Sendable ([Change]) -> Void {
        { [self] changes in deliver(changes) }
    }

    /// `deliverEach` as a closure, for `Store(onCommitGroup:onCommitEach:)`.
    public var onCommitEach: @Sendable ([Change]) -> Void {
        { [self] changes in deliverEach(changes) }
    }
}
