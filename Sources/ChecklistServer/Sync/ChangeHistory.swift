import ChecklistModel
import ChecklistStore
import ChecklistWire

/// One list's retained changes in the `ChangeFeed`: consecutive revisions
/// `(floor, last]`, oldest first, with what they take.
///
/// A plain value, not thread-safe: the feed's. The feed changes it in
/// place (`take`, one access for a change): reading it out of the feed's
/// dictionary would copy it.
struct ChangeHistory {
    /// The namespace of the list (every change of a list has the same).
    let namespace: Namespace
    private var changes = FIFO<RetainedChange>()
    /// Revisions `(floor, last]` are retained.
    private(set) var floor: Revision
    private(set) var last: Revision
    /// What the retained changes take.
    private(set) var totals = Totals()

    /// Changes counted, with their frame bytes (what the feed's bounds
    /// count) and the bytes actually held for them (`RetainedChange.
    /// storedCount`); also a difference of these.
    struct Totals {
        var count = 0
        var bytes = 0
        var storedBytes = 0

        /// What `change` counts for.
        init(_ change: borrowing RetainedChange) {
            count = 1
            bytes = change.frameCount
            storedBytes = change.storedCount
        }

        init() {}

        static func += (lhs: inout Totals, rhs: Totals) {
            lhs.count += rhs.count
            lhs.bytes += rhs.bytes
            lhs.storedBytes += rhs.storedBytes
        }

        static func -= (lhs: inout Totals, rhs: Totals) {
            lhs.count -= rhs.count
            lhs.bytes -= rhs.bytes
            lhs.storedBytes -= rhs.storedBytes
        }
    }

    /// An empty history whose next change is `revision + 1`.
    init(namespace: Namespace, after revision: Revision) {
        self.namespace = namespace
        floor = revision
        last = revision
    }

    var count: Int { changes.count }

    /// The revision of the oldest change retained (retained revisions run
    /// from `floor + 1`).
    var oldestRevision: Revision? { changes.isEmpty ? nil : floor + 1 }

    /// Takes `revision` of the list, a change in `namespace`, keeping
    /// `retained` of it and dropping the oldest beyond `keeping` (with
    /// nothing retained, or none kept, only the revision is noted). A
    /// change not after `last` is retained already: nil, nothing changes.
    /// One that does not follow `last`, an import (`startsHistory`), or a
    /// change in another namespace starts the history over. Returns by how
    /// much the totals changed.
    mutating func take(_ revision: Revision, of namespace: Namespace, startsHistory: Bool,
                       retaining retained: consuming RetainedChange?, keeping: Int) -> Totals? {
        guard revision > last else { return nil }
        var change = Totals()
        if revision != last + 1 || startsHistory || namespace != self.namespace || keeping == 0 {
            // Not the next revision (the feed missed changes), or an import
            // that replaced the list: start over from here.
            change -= totals
            self = ChangeHistory(namespace: namespace, after: revision - 1)
        }
        guard keeping > 0, let retained = retained.take() else {
            floor = revision
            last = revision
            return change
        }
        change += Totals(retained)
        add(retained, at: revision)
        while changes.count > keeping { change -= dropOldest() }
        return change
    }

    /// Appends `change` at `revision`, the next one.
    private mutating func add(_ change: consuming RetainedChange, at revision: Revision) {
        last = revision
        totals += Totals(change)
        changes.append(change)
    }

    /// Drops the oldest change; returns what it took.
    mutating func dropOldest() -> Totals {
        guard let oldest = changes.popFirst() else { return Totals() }
        floor += 1
        let dropped = Totals(oldest)
        totals -= dropped
        return dropped
    }

    /// The **ListChange** size of the `index`th retained change from the oldest.
    func bodyCount(at index: Int) -> Int { changes[index].bodyCount }

    /// The `index`th retained change from the oldest, of list `list`, as
    /// it was published.
    func encoded(at index: Int, of list: ListID) -> EncodedChange {
        changes[index].encoded(list: list, namespace: namespace, revision: floor + 1 + Revision(index))
    }
}
