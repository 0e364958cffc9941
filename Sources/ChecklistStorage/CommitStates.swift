import ChecklistModel
import Synchronization

/// Where each commit position stands (durable, failed or pending: `CommitState`)
/// and the waiters (connections whose answers wait for their commits) to
/// wake when theirs settles: the storage calls `durable(_:)`
/// as its durable position advances (the log's flusher, after each fsync)
/// and `failed(_:)` for commits that will never be durable (unless it
/// commits them on a later try: `durableIncludingFailed(_:)`); every
/// connection waiting for a position so settled is woken (on the storage's
/// thread; the wake hands the work to the connection's loop).
///
/// The bookkeeping half of a `ServerStorage`'s `commitState`, `notify` and
/// `cancelNotification`.
public final class CommitStates: Sendable {
    /// Wakes one waiter; it then asks `state(of:)` for what it holds.
    public typealias Wake = @Sendable () -> Void

    private struct Waiter {
        var position: UInt64
        var wake: Wake
    }

    private struct State {
        var waiting: [UInt64: Waiter] = [:]
        /// Positions that failed, as closed ranges in increasing order
        /// (failures are rare: kept for the process's life).
        var failed: [ClosedRange<UInt64>] = []
        /// Commits refused for good, with the error their answers get
        /// (`refuse`), and whether `failed` reported them yet: from then on
        /// failed, and never made durable by a later commit.
        var refused: [UInt64: (error: ChecklistError, failed: Bool)] = [:]
        /// `refused`'s positions in the order refused, to forget the oldest.
        var refusedOrder: [UInt64] = []
    }

    /// Refusals kept for their answers; older ones are forgotten (their
    /// connections took them long ago, or closed).
    static let keptRefusals = 4096

    private let state = Mutex(State())
    private let durablePosition = Atomic<UInt64>(0)
    /// Whether any commit failed: until one does, `state(of:)` is one atomic load.
    private let anyFailed = Atomic<Bool>(false)

    /// - Parameter durable: the position known durable at start (what a
    ///   restart recovered), so that waiting for it ends at once.
    public init(durable: UInt64 = 0) {
        durablePosition.store(durable, ordering: .relaxed)
    }

    /// The highest position known durable.
    public var durable: UInt64 { durablePosition.load(ordering: .acquiring) }

    /// Where the commit at `position` stands.
    public func state(of position: UInt64) -> CommitState {
        // Read before the failures: a position is never both, and a failed one
        // is recorded before the durable position passes it.
        let durableNow = durablePosition.load(ordering: .acquiring)
        if anyFailed.load(ordering: .acquiring),
           state.withLock({ s in s.refused[position]?.failed == true || s.failed.contains { $0.contains(position) } }) {
            return .failed
        }
        return position <= durableNow ? .durable : .pending
    }

    /// Registers (or updates) `waiter` as waiting for `position`, the last
    /// position it holds an answer for. If that is already settled, wakes it
    /// at once. (A failure of an earlier position reported just before the
    /// registration wakes it only once `position` settles: late, never
    /// wrongly, since the waiter checks each answer it holds.)
    public func wait(waiter: UInt64, for position: UInt64, wake: @escaping Wake) {
        state.withLock { $0.waiting[waiter] = Waiter(position: position, wake: wake) }
        // The storage may have settled `position` before the registration.
        if self.state(of: position) != .pending { wakeSettled(failed: nil) }
    }

    public func cancel(waiter: UInt64) {
        _ = state.withLock { $0.waiting.removeValue(forKey: waiter) }
    }

    /// Everything up to `position` is durable (failed positions excepted).
    public func durable(_ position: UInt64) {
        durablePosition.store(max(position, durablePosition.load(ordering: .relaxed)), ordering: .releasing)
        wakeSettled(failed: nil)
    }

    /// Everything up to `position` is durable, failed positions included:
    /// the storage kept the failed commits and has now committed them (the
    /// PostgreSQL committer's retry), so a retry answered from memory may leave.
    public func durableIncludingFailed(_ position: UInt64) {
        if anyFailed.load(ordering: .acquiring) {
            state.withLock { s in
                s.failed = s.failed.compactMap { range in
                    range.upperBound <= position ? nil : (range.lowerBound > position ? range : (position + 1)...range.upperBound)
                }
            }
        }
        durable(position)
    }

    /// The commit at `position` is refused with `error` (a quota the
    /// database's counts showed passed) and will never be durable: once
    /// `failed` reports it (when the storage has undone it), it stays
    /// failed and its answer is replaced by `error` (`refusal(in:)`).
    public func refuse(_ position: UInt64, _ error: ChecklistError) {
        state.withLock { s in
            if s.refused.updateValue((error, false), forKey: position) == nil { s.refusedOrder.append(position) }
            if s.refusedOrder.count > Self.keptRefusals { s.refused[s.refusedOrder.removeFirst()] = nil }
        }
    }

    /// The error a commit refused in `positions` is answered with; nil when none was refused there.
    public func refusal(in positions: ClosedRange<UInt64>) -> ChecklistError? {
        guard anyFailed.load(ordering: .acquiring) else { return nil }
        return state.withLock { s in
            s.refused.filter { positions.contains($0.key) && $0.value.failed }.min { $0.key < $1.key }?.value.error
        }
    }

    /// The commits at `positions` will never be durable. Call it before the
    /// durable position passes them.
    public func failed(_ positions: ClosedRange<UInt64>) {
        state.withLock { s in
            s.failed.append(positions)
            for position in s.refused.keys where positions.contains(position) { s.refused[position]?.failed = true }
        }
        anyFailed.store(true, ordering: .releasing)
        wakeSettled(failed: positions)
    }

    /// Wakes the waiters whose position is durable, and those holding an
    /// answer at or after a failed range (their position is the last they
    /// hold, so an earlier one may be in it).
    private func wakeSettled(failed: ClosedRange<UInt64>?) {
        let durableNow = durablePosition.load(ordering: .acquiring)
        let ready = state.withLock { s -> [Wake] in
            let ids = s.waiting.filter { entry in
                entry.value.position <= durableNow || failed.map { entry.value.position >= $0.lowerBound } == true
                    || s.failed.contains { $0.contains(entry.value.position) } || s.refused[entry.value.position]?.failed == true
            }.map(\.key)
            return ids.compactMap { s.waiting.removeValue(forKey: $0)?.wake }
        }
        for wake in ready { wake() }
    }
}
