import ChecklistModel
import ChecklistStore
import ChecklistThreads
import Synchronization

/// The answer a PATCH gets after its commit lost to another node's and the
/// committer rebased it (docs/POSTGRES.md, "Several nodes"): the answer the
/// connection holds (written when the patch was first applied) is replaced
/// by this one before it leaves.
public enum RebasedAnswer: Sendable, Hashable {
    /// PATCH_OK with the revision and ids of the patch applied again.
    case patched(revision: Revision, ids: [TempRefAssignment])
    /// An ERROR (`CONFLICT` for a stale `baseRevision`, or what the apply
    /// met on top of the other node's changes).
    case refused(ChecklistError)
}

/// A keyed PATCH: its namespace and idempotency key (a retry is answered
/// from the idempotency memory under it).
public struct RetriedPatch: Sendable, Hashable {
    public var namespace: Namespace
    public var key: IdempotencyKey

    public init(namespace: Namespace, key: IdempotencyKey) {
        self.namespace = namespace
        self.key = key
    }
}

/// The rebased answers not yet picked up by their connections, by commit
/// position. Written by the committer before the position is durable,
/// read (and removed) by the connection that holds the answer when it
/// releases it (`DurabilityBarrier`); an answer never picked up (its
/// connection closed) is dropped a minute after it was written. A keyed
/// patch's answer is also kept by its key for that minute, for a retry
/// answered from the idempotency memory while the original was in flight
/// (`retried`: read, not taken, since the original's connection takes its own).
final class RebasedAnswers: Sendable {
    private struct Entry {
        /// What the held answer says: its list and the revision it had first.
        var list: ListID
        var revision: Revision
        var answer: RebasedAnswer
        var writtenAt: UInt64
    }

    private struct State {
        var byPosition: [UInt64: Entry] = [:]
        /// Positions in the order written, for the expiry.
        var order: FIFO<UInt64> = FIFO()
        var byKey: [RetriedPatch: Entry] = [:]
        /// Keys in the order written, for the expiry.
        var keyOrder: FIFO<RetriedPatch> = FIFO()
    }

    static let keepNanoseconds: UInt64 = 60_000_000_000
    private let state = Mutex(State())
    /// Entries held: while 0, a lookup is one atomic load.
    private let count = Atomic<Int>(0)

    /// The commit at `position` (a patch of `list` first applied at
    /// `revision`, keyed with `key` if it carried one) now answers
    /// `answer`. A position rebased again keeps the revision its held
    /// answer shows.
    func record(_ answer: RebasedAnswer, position: UInt64, list: ListID, revision: Revision, key: RetriedPatch? = nil) {
        let now = monotonicNanoseconds()
        state.withLock { s in
            if s.byPosition[position] != nil {
                s.byPosition[position]!.answer = answer
            } else {
                s.byPosition[position] = Entry(list: list, revision: revision, answer: answer, writtenAt: now)
                s.order.append(position)
            }
            if let key {
                if s.byKey[key] != nil {
                    s.byKey[key]!.answer = answer
                } else {
                    s.byKey[key] = Entry(list: list, revision: revision, answer: answer, writtenAt: now)
                    s.keyOrder.append(key)
                }
            }
            while let oldest = s.keyOrder.first, s.byKey[oldest].map({ now - $0.writtenAt > Self.keepNanoseconds }) ?? true {
                s.byKey[oldest] = nil
                _ = s.keyOrder.popFirst()
            }
            // Taken ones, and those a minute old, leave the front.
            while let oldest = s.order.first,
                  s.byPosition[oldest].map({ now - $0.writtenAt > Self.keepNanoseconds }) ?? true {
                s.byPosition[oldest] = nil
                _ = s.order.popFirst()
            }
            count.store(s.byPosition.count + s.byKey.count, ordering: .releasing)
        }
    }

    /// The rebased answer of the keyed patch `key` of `list` that answered
    /// `revision` (what a retry answered from the idempotency memory while
    /// the original was in flight shows), if its commit was rebased; left
    /// in place.
    func retried(_ key: RetriedPatch, list: ListID, revision: Revision) -> RebasedAnswer? {
        guard count.load(ordering: .acquiring) > 0 else { return nil }
        return state.withLock { s in
            guard let entry = s.byKey[key], entry.list == list, entry.revision == revision else { return nil }
            return entry.answer
        }
    }

    /// Takes the rebased answer of a patch of `list` that answered
    /// `revision`, committed at a position in `positions`.
    func take(in positions: ClosedRange<UInt64>, list: ListID, revision: Revision) -> RebasedAnswer? {
        guard count.load(ordering: .acquiring) > 0 else { return nil }
        return state.withLock { s -> RebasedAnswer? in
            let found: UInt64?
            if positions.count <= s.byPosition.count {
                found = positions.first { s.byPosition[$0].map { $0.list == list && $0.revision == revision } == true }
            } else {
                found = s.byPosition.first { positions.contains($0.key) && $0.value.list == list && $0.value.revision == revision }?.key
            }
            guard let found, let entry = s.byPosition.removeValue(forKey: found) else { return nil }
            count.store(s.byPosition.count + s.byKey.count, ordering: .releasing)
            return entry.answer
        }
    }
}
