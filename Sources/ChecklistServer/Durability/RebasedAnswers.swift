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

/// The rebased answers not yet picked up by their connections, by commit
/// position. Written by the committer before the position is durable,
/// read (and removed) by the connection that holds the answer when it
/// releases it (`DurabilityBarrier`); an answer never picked up (its
/// connection closed) is dropped a minute after it was written.
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
    }

    static let keepNanoseconds: UInt64 = 60_000_000_000
    private let state = Mutex(State())
    /// Entries held: while 0, a lookup is one atomic load.
    private let count = Atomic<Int>(0)

    /// The commit at `position` (a patch of `list` first applied at
    /// `revision`) now answers `answer`. A position rebased again keeps
    /// the revision its held answer shows.
    func record(_ answer: RebasedAnswer, position: UInt64, list: ListID, revision: Revision) {
        let now = monotonicNanoseconds()
        state.withLock { s in
            if s.byPosition[position] != nil {
                s.byPosition[position]!.answer = answer
            } else {
                s.byPosition[position] = Entry(list: list, revision: revision, answer: answer, writtenAt: now)
                s.order.append(position)
            }
            // Taken ones, and those a minute old, leave the front.
            while let oldest = s.order.first,
                  s.byPosition[oldest].map({ now - $0.writtenAt > Self.keepNanoseconds }) ?? true {
                s.byPosition[oldest] = nil
                _ = s.order.popFirst()
            }
            count.store(s.byPosition.count, ordering: .releasing)
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
            count.store(s.byPosition.count, ordering: .releasing)
            return entry.answer
        }
    }
}
