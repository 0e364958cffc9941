import ChecklistModel
import ChecklistWire
import ChecklistStore

/// The retained history of every list: the last changes of each, already
/// encoded, for CHANGES_SINCE and for the catch-up of a SUBSCRIBE.
///
/// Bounded twice: at most `retainPerList` changes per list, and at most
/// `maxBytes` encoded bytes in all (the oldest change of the whole server is
/// dropped first). A list's retained changes are always consecutive
/// revisions `(floor, last]`; a request from a revision below `floor` is
/// answered RESYNC_REQUIRED. A deleted list's history is dropped at once,
/// and an imported list's history starts over at its import (the import is
/// its oldest retained change: Protocol/SPEC.md section 6.13).
///
/// The bounds count each change's frame bytes; the feed holds bulk changes
/// deflated (`RetainedChange`), so it takes less memory than it counts.
///
/// A plain value, not thread-safe: `SubscriptionHub` keeps it under its lock.
struct ChangeFeed {
    struct Configuration: Hashable, Sendable {
        var retainPerList: Int
        var maxBytes: Int
    }

    private struct History {
        var changes = FIFO<RetainedChange>()
        /// Revisions `(floor, last]` are retained.
        var floor: Revision
        var last: Revision
        /// Frame bytes of the retained changes (what the bound counts).
        var bytes = 0
        /// Bytes actually held for them (deflated where that paid).
        var storedBytes = 0

        /// The revision of the oldest change retained (read without copying
        /// the change: retained revisions run from `floor + 1`).
        var oldestRevision: Revision? { changes.isEmpty ? nil : floor + 1 }

        /// Appends `change`, at `revision` (the next one), and drops the
        /// oldest beyond `keeping`; returns what was dropped.
        mutating func add(_ change: consuming RetainedChange, at revision: Revision,
                          keeping: Int) -> (frame: Int, stored: Int, count: Int) {
            last = revision
            bytes += change.frameCount
            storedBytes += change.storedCount
            changes.append(change)
            var dropped = (frame: 0, stored: 0, count: 0)
            while changes.count > keeping {
                let (frame, stored) = dropOldest()
                dropped = (dropped.frame + frame, dropped.stored + stored, dropped.count + 1)
            }
            return dropped
        }

        /// Drops the oldest change; returns its frame and stored sizes.
        mutating func dropOldest() -> (frame: Int, stored: Int) {
            guard let oldest = changes.popFirst() else { return (0, 0) }
            floor = oldest.revision
            bytes -= oldest.frameCount
            storedBytes -= oldest.storedCount
            return (oldest.frameCount, oldest.storedCount)
        }
    }

    /// What the feed can say about the changes after a revision.
    enum Since {
        /// The changes after the revision, oldest first, as many as fit;
        /// `complete` when they reach the list's current revision.
        case changes([EncodedChange], complete: Bool)
        /// They are not all retained (or the client is ahead of the list).
        case resyncRequired
    }

    let configuration: Configuration
    private var lists: [ListID: History] = [:]
    /// The list appended to last and where its history is in `lists`:
    /// forgotten whenever a list is added or removed.
    private var recent: (list: ListID, index: [ListID: History].Index)?
    /// (list, revision) of every retained change in publish order, for the
    /// global byte bound; entries already dropped otherwise are skipped.
    private var order = FIFO<(ListID, Revision)>()
    private(set) var retainedBytes = 0
    private(set) var retainedCount = 0
    /// Memory held for the retained changes' bytes (at most `retainedBytes`).
    private(set) var storedBytes = 0

    init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    /// What `append(_:retaining:)` keeps of `change` under `configuration`
    /// (nil: nothing). Deflating takes time: callers make it before taking
    /// the lock the feed is kept under.
    static func retainable(_ change: EncodedChange, under configuration: Configuration) -> RetainedChange? {
        retains(change.isDeletion, under: configuration) ? RetainedChange(change) : nil
    }

    /// `retainable(_:under:)` for a change not encoded yet (kept so when small).
    static func retainable(_ change: PublishedChange, under configuration: Configuration) -> RetainedChange? {
        retains(change.isDeletion, under: configuration) ? RetainedChange(change) : nil
    }

    /// Whether a change is retained at all: not a deletion, and bytes allowed
    /// (with none, nothing ever is: no use deflating).
    private static func retains(_ isDeletion: Bool, under configuration: Configuration) -> Bool {
        !isDeletion && configuration.retainPerList > 0 && configuration.maxBytes > 0
    }

    /// Retains a change just committed. Changes of one list arrive in
    /// revision order (the store's `onCommit` order). A change at or below
    /// the list's newest retained revision is retained already (a list
    /// loaded again into a node's cache replays its history): ignored. An
    /// import (`startsHistory`) drops what was retained of the list before
    /// it, even when it follows it by one revision: replaying the old
    /// changes would not lead to the imported list.
    mutating func append(_ change: EncodedChange) {
        append(change, retaining: Self.retainable(change, under: configuration))
    }

    /// `append(_:)` with `retained` made beforehand by `retainable(_:under:)`
    /// (taken over: kept without a copy).
    mutating func append(_ change: borrowing EncodedChange, retaining retained: consuming RetainedChange?) {
        append(list: change.list, revision: change.revision, isDeletion: change.isDeletion,
               startsHistory: change.startsHistory, retaining: retained)
    }

    /// `append(_:retaining:)` given what the feed reads of the change (so
    /// that a publisher need not copy the change to lend it). The list's
    /// history is changed where it is in the dictionary (one lookup, none
    /// for the next change of the same list, no copy of it).
    mutating func append(list: ListID, revision: Revision, isDeletion: Bool, startsHistory: Bool,
                         retaining retained: consuming RetainedChange?) {
        let found = recent?.list == list ? recent?.index : lists.index(forKey: list)
        if let found, revision <= lists.values[found].last { return }
        if isDeletion {
            if let found {
                recent = nil
                forget(lists.remove(at: found).value)
            }
            return
        }
        let index: [ListID: History].Index
        if let found {
            if revision != lists.values[found].last + 1 || startsHistory {
                // Not the next revision (the feed missed changes), or an
                // import that replaced the list: start over from here.
                forget(lists.values[found])
                lists.values[found] = History(floor: revision - 1, last: revision - 1)
            }
            index = found
        } else {
            lists[list] = History(floor: revision - 1, last: revision - 1)
            index = lists.index(forKey: list)!
        }
        // Valid until a list is added or removed (changing a history in place keeps it).
        recent = (list, index)
        guard configuration.retainPerList > 0, let retained = retained.take() else {
            lists.values[index] = History(floor: revision, last: revision)
            return
        }
        let (frameCount, storedCount) = (retained.frameCount, retained.storedCount)
        let dropped = lists.values[index].add(retained, at: revision, keeping: configuration.retainPerList)
        retainedBytes += frameCount - dropped.frame
        storedBytes += storedCount - dropped.stored
        retainedCount += 1 - dropped.count
        order.append((list, revision))
        while retainedBytes > configuration.maxBytes, let (list, revision) = order.popFirst() {
            // Publish order is revision order per list: a live entry is its list's oldest.
            guard let at = lists.index(forKey: list), lists.values[at].oldestRevision == revision else { continue }
            forget(dropped: lists.values[at].dropOldest())
        }
        if order.count > 2 * retainedCount + 1024 { compactOrder() }
    }

    /// Drops from `order` the entries whose change is no longer retained.
    /// Runs of one list's entries (one list busy, or many patches of it in
    /// a row) look its history up once.
    private mutating func compactOrder() {
        // The list looked up last and its retained revisions `(floor, last]` (nil: no history).
        var cachedList: ListID?
        var cached: (floor: Revision, last: Revision)?
        order.removeAll { list, revision in
            if cachedList != list {
                cachedList = list
                cached = lists.index(forKey: list).map { (lists.values[$0].floor, lists.values[$0].last) }
            }
            guard let (floor, last) = cached else { return true }
            return revision <= floor || revision > last
        }
    }

    private mutating func forget(dropped: (frame: Int, stored: Int)) {
        retainedBytes -= dropped.frame
        storedBytes -= dropped.stored
        retainedCount -= 1
    }

    private mutating func forget(_ history: History) {
        retainedBytes -= history.bytes
        storedBytes -= history.storedBytes
        retainedCount -= history.changes.count
    }

    /// The changes of `list` after `since`, at most `limit` of them and at
    /// most `maxBytes` of **ListChange** bytes (but at least one, when any),
    /// given that the list is at revision `current` (read from the store
    /// under the same lock hold as this call).
    func changes(of list: ListID, after since: Revision, current: Revision, limit: Int, maxBytes: Int) -> Since {
        if since == current { return .changes([], complete: true) }
        guard since < current, let history = lists[list], history.last == current, since >= history.floor else {
            return .resyncRequired
        }
        let retained = history.changes
        let start = Int(since - history.floor)
        let result = Self.page(count: retained.count - start, limit: limit, maxBytes: maxBytes,
                               bodyCount: { retained[start + $0].bodyCount }, encoded: { retained[start + $0].encoded() })
        return .changes(result, complete: result.last?.revision == current)
    }

    /// What one CHANGES answer takes of `count` consecutive changes (the
    /// `index`th given by `encoded`, its **ListChange** size by
    /// `bodyCount`): at most `limit` of them and at most `maxBytes` of
    /// **ListChange** bytes, but at least one when there is any. The
    /// node's feed and the changes read from the database
    /// (`SubscriptionHub.changes(of:after:limit:in:store:stored:)`) page alike.
    static func page(count: Int, limit: Int, maxBytes: Int, bodyCount: (Int) -> Int,
                     encoded: (Int) -> EncodedChange) -> [EncodedChange] {
        var result: [EncodedChange] = []
        var bytes = 0
        var index = 0
        while index < count && result.count < limit {
            bytes += bodyCount(index)
            if bytes > maxBytes && !result.isEmpty { break }
            result.append(encoded(index))
            index += 1
        }
        return result
    }

    /// The range of revisions retained for `list`, if it has any.
    func retained(_ list: ListID) -> ClosedRange<Revision>? {
        guard let history = lists[list], history.last > history.floor else { return nil }
        return (history.floor + 1)...history.last
    }
}

