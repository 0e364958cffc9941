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
/// releases it (`AnswerHolder`); an answer never picked up (its
/// connection closed) is dropped a minute after it was written. A keyed
/// patch's answer is also kept by its key for that minute, for a retry
/// answered from the idempotency memory while the original was in flight
/// (`retried`: read, not taken, since the original's connection takes its own).
final class RebasedPatchAnswers: Sendable {
    private struct Entry {
        /// What the held answer says: its list and the revision it had first.
        var list: ListID
        var revision: Revision
        var answer: RebasedAnswer
        var writtenAt: UInt64
    }

    /// What a held answer shows: its list and the revision it had first.
    private struct Shown: Hashable {
        var list: ListID
        var revision: Revision
    }

    /// Entries by `Key`, dropped a minute after they were first written
    /// (and as soon as taken), and, when `indexesShown`, found by what
    /// their held answers show.
    private struct Kept<Key: Hashable> {
        var entries: [Key: Entry] = [:]
        /// Keys in the order written, for the expiry.
        var order: FIFO<Key> = FIFO()
        /// Whether `byShown` is kept: only the table by position is looked
        /// up by what the held answer shows (`take`); the one by key is
        /// read by its key (`retried`).
        let indexesShown: Bool
        /// The keys of the entries showing each list and revision (almost
        /// always one), so a lookup costs no scan of the entries.
        var byShown: [Shown: [Key]] = [:]

        init(indexesShown: Bool) { self.indexesShown = indexesShown }

        /// Sets `key`'s answer; a key kept already keeps its first revision.
        mutating func put(_ key: Key, _ answer: RebasedAnswer, list: ListID, revision: Revision, now: UInt64) {
            if entries[key] != nil {
                entries[key]!.answer = answer
            } else {
                entries[key] = Entry(list: list, revision: revision, answer: answer, writtenAt: now)
                order.append(key)
                if indexesShown { byShown[Shown(list: list, revision: revision), default: []].append(key) }
            }
        }

        /// The key in `positions` of the entry of `list` at `revision`.
        func position(in positions: ClosedRange<UInt64>, list: ListID, revision: Revision) -> UInt64? where Key == UInt64 {
            byShown[Shown(list: list, revision: revision)]?.first { positions.contains($0) }
        }

        /// Removes `key`'s entry; returns it.
        mutating func remove(_ key: Key) -> Entry? {
            guard let entry = entries.removeValue(forKey: key) else { return nil }
            guard indexesShown else { return entry }
            let shown = Shown(list: entry.list, revision: entry.revision)
            byShown[shown]?.removeAll { $0 == key }
            if byShown[shown]?.isEmpty == true { byShown[shown] = nil }
            return entry
        }

        /// Taken ones, and those a minute old, leave the front.
        mutating func expire(now: UInt64) {
            while let oldest = order.first, entries[oldest].map({ now - $0.writtenAt > RebasedPatchAnswers.keepNanoseconds }) ?? true {
                _ = remove(oldest)
                _ = order.popFirst()
            }
        }
    }

    private struct State {
        var byPosition = Kept<UInt64>(indexesShown: true)
        var byKey = Kept<RetriedPatch>(indexesShown: false)
        var count: Int { byPosition.entries.count + byKey.entries.count }
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
            s.byPosition.put(position, answer, list: list, revision: revision, now: now)
            if let key { s.byKey.put(key, answer, list: list, revision: revision, now: now) }
            s.byPosition.expire(now: now)
            s.byKey.expire(now: now)
            count.store(s.count, ordering: .releasing)
        }
    }

    /// The rebased answer of the keyed patch `key` of `list` that answered
    /// `revision` (what a retry answered from the idempotency memory while
    /// the original was in flight shows), if its commit was rebased; left
    /// in place.
    func retried(_ key: RetriedPatch, list: ListID, revision: Revision) -> RebasedAnswer? {
        guard count.load(ordering: .acquiring) > 0 else { return nil }
        return state.withLock { s in
            guard let entry = s.byKey.entries[key], entry.list == list, entry.revision == revision else { return nil }
            return entry.answer
        }
    }

    /// Takes the rebased answer of a patch of `list` that answered
    /// `revision`, committed at a position in `positions`.
    func take(in positions: ClosedRange<UInt64>, list: ListID, revision: Revision) -> RebasedAnswer? {
        guard count.load(ordering: .acquiring) > 0 else { return nil }
        return state.withLock { s -> RebasedAnswer? in
            guard let found = s.byPosition.position(in: positions, list: list, revision: revision),
                  let entry = s.byPosition.remove(found) else { return nil }
            count.store(s.count, ordering: .releasing)
            return entry.answer
        }
    }
}
