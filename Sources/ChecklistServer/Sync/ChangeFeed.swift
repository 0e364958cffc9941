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

    /// What the feed can say about the changes after a revision.
    enum Since {
        /// The changes after the revision, oldest first, as many as fit;
        /// `complete` when they reach the list's current revision.
        case changes([EncodedChange], complete: Bool)
        /// They are not all retained (or the client is ahead of the list).
        case resyncRequired
    }

    let configuration: Configuration
    private var lists: [ListID: ChangeHistory] = [:]
    /// The list appended to last and where its history is in `lists`:
    /// forgotten whenever a list is added or removed.
    private var recent: (list: ListID, index: [ListID: ChangeHistory].Index)?
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

    /// Whether a change is retained at all: not a deletion, and bytes allowed
    /// (with none, nothing ever is: no use keeping or deflating). Callers
    /// make what is retained (`RetainedChange`) before taking the lock the
    /// feed is kept under: deflating takes time.
    static func retains(isDeletion: Bool, under configuration: Configuration) -> Bool {
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
        let retained = Self.retains(isDeletion: change.isDeletion, under: configuration) ? RetainedChange(change) : nil
        append(list: change.list, namespace: change.namespace, revision: change.revision, isDeletion: change.isDeletion,
               startsHistory: change.startsHistory, retaining: retained)
    }

    /// `append(_:)` given what the feed reads of the change, with what it
    /// keeps of it made beforehand (nil when `retains(isDeletion:under:)`
    /// says nothing is). The list's history is changed where it is in the
    /// dictionary (one lookup, none for the next change of the same list,
    /// no copy of it).
    mutating func append(list: ListID, namespace: Namespace, revision: Revision, isDeletion: Bool, startsHistory: Bool,
                         retaining retained: consuming RetainedChange?) {
        let found = recent?.list == list ? recent?.index : lists.index(forKey: list)
        if isDeletion {
            if let found, revision > lists.values[found].last {
                recent = nil
                forget(lists.remove(at: found).value.totals)
            }
            return
        }
        let index: [ListID: ChangeHistory].Index
        if let found {
            index = found
        } else {
            lists[list] = ChangeHistory(namespace: namespace, after: revision - 1)
            index = lists.index(forKey: list)!
        }
        // Valid until a list is added or removed (changing a history in place keeps it).
        recent = (list, index)
        let keeping = retained == nil ? 0 : configuration.retainPerList
        guard let change = lists.values[index].take(revision, of: namespace, startsHistory: startsHistory,
                                                      retaining: retained, keeping: keeping) else { return }
        retainedBytes += change.bytes
        storedBytes += change.storedBytes
        retainedCount += change.count
        guard keeping > 0 else { return }
        order.append((list, revision))
        while retainedBytes > configuration.maxBytes, let (list, revision) = order.popFirst() {
            // Publish order is revision order per list: a live entry is its list's oldest.
            guard let at = lists.index(forKey: list), lists.values[at].oldestRevision == revision else { continue }
            forget(lists.values[at].dropOldest())
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

    /// Takes what a history no longer retains off the totals.
    private mutating func forget(_ dropped: ChangeHistory.Totals) {
        retainedBytes -= dropped.bytes
        storedBytes -= dropped.storedBytes
        retainedCount -= dropped.count
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
        let start = Int(since - history.floor)
        let result = Self.page(count: history.count - start, limit: limit, maxBytes: maxBytes,
                               bodyCount: { history.bodyCount(at: start + $0) },
                               encoded: { history.encoded(at: start + $0, of: list) })
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

