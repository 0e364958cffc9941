import ChecklistModel

/// Everything the store holds; lives inside the store's `StoreLock` and is only
/// touched with the lock held. A value type throughout (lists, trees and
/// columns are structs of arrays), so it is `Sendable` and mutated in place.
struct StoreState: ~Copyable {
    /// Node capacities of every list's rows.
    let treeShape: RowTreeShape
    /// The id the next created list gets; store-wide, only grows.
    var nextListID: UInt64 = 1
    /// What each namespace may hold (`Store.setQuotas`).
    var quotas = NamespaceQuotas()
    var lists: [ListID: ListState] = [:]
    /// While set, every change through the apply path is refused with it
    /// (`Store.refuseChanges`).
    var refusal: ChecklistError?
    /// Each namespace's list ids, ascending.
    var listIDs: [Namespace: [ListID]] = [:]
    /// Answers of patches that carried an idempotency key.
    var idempotency = IdempotencyWindow()
    /// The patches whose commits may still be rebased, when the storage
    /// keeps them (`Store.keepPendingPatches`).
    var pending: PendingPatches?
    /// The list ids reserved for this node's creations, oldest block first,
    /// when a database hands them out (`Store.addListIDs`); nil: created
    /// lists take `nextListID`.
    var listIDBlocks: [Range<UInt64>]?
    /// How often each list's cached revisions were rewritten (a rebase onto
    /// another node's commits, a reload replacing the list): a read of a
    /// list with changes not committed yet is what the database holds at
    /// its revision only if this did not move before they committed.
    /// Lists never rewritten have no entry.
    var rewrites: [ListID: UInt64] = [:]
    /// Where a batch of patches gathers its changes (`Store.patch(in:batch:into:)`),
    /// kept between batches for its capacity; empty outside one.
    var batchChanges: [Change] = []
    /// The undo log a patch records into, kept between patches for its
    /// capacity; empty outside one (a patch whose log `pending` keeps
    /// leaves an empty one without storage here).
    var undoScratch = UndoLog()

    init(treeShape: RowTreeShape) {
        self.treeShape = treeShape
    }

    /// The storage index of `list` if it exists in namespace `ns`. A list
    /// of another namespace is reported exactly like a missing one.
    ///
    /// `mutating` only to look at the list in place: reading a value out of
    /// a Dictionary copies it (retaining all its columns), while `inout`
    /// access through `values[index]` does not.
    mutating func index(of list: ListID, in ns: Namespace) throws(ChecklistError) -> Dictionary<ListID, ListState>.Index {
        guard let index = lists.index(forKey: list), Self.namespace(of: &lists.values[index]) == ns else {
            throw Self.listNotFound(list)
        }
        return index
    }

    /// Runs `body` on the list `list` of namespace `ns`, in place.
    mutating func withList<R>(_ list: ListID, in ns: Namespace,
                              _ body: (inout ListState) throws(ChecklistError) -> R) throws(ChecklistError) -> R {
        let index = try index(of: list, in: ns)
        return try body(&lists.values[index])
    }

    /// Runs `body` on the list at `index`, in place: reading
    /// `lists.values[index].revision` would copy the whole list (see
    /// `index(of:in:)`) to read one field.
    @inline(__always)
    mutating func inPlace<R, E: Error>(_ index: Dictionary<ListID, ListState>.Index,
                                       _ body: (inout ListState) throws(E) -> R) throws(E) -> R {
        try body(&lists.values[index])
    }

    /// The revision of list `list` of namespace `ns`, nil when there is no
    /// such list; read in place (mutating only to reach the list without
    /// copying it).
    mutating func revisionInPlace(of list: ListID, in ns: Namespace) -> Revision? {
        guard let index = lists.index(forKey: list) else { return nil }
        return inPlace(index) { $0.namespace == ns ? $0.revision : nil }
    }

    /// Runs `body` on the list `list` of namespace `ns`, for reading only
    /// (under the store's shared lock).
    func readList<R>(_ list: ListID, in ns: Namespace,
                     _ body: (borrowing ListState) throws(ChecklistError) -> R) throws(ChecklistError) -> R {
        guard let index = lists.index(forKey: list) else { throw Self.listNotFound(list) }
        let state = lists.values[index]
        guard state.namespace == ns else { throw Self.listNotFound(list) }
        return try body(state)
    }

    private static func namespace(of list: inout ListState) -> Namespace {
        list.namespace
    }

    static func listNotFound(_ list: ListID) -> ChecklistError {
        .notFound("list \(list) not found")
    }

    /// Adds a list that is not present yet.
    mutating func add(_ list: ListState) {
        lists[list.id] = list
        var ids = listIDs.removeValue(forKey: list.namespace) ?? []
        if let last = ids.last, last > list.id {
            ids.insert(list.id, at: ids.partitionPoint { $0 > list.id })
        } else {
            ids.append(list.id)
        }
        listIDs[list.namespace] = ids
        nextListID = max(nextListID, list.id.rawValue &+ 1)
    }

    /// Removes the list at `index` and returns it.
    mutating func remove(at index: Dictionary<ListID, ListState>.Index) -> ListState {
        let list = lists.remove(at: index).value
        if var ids = listIDs.removeValue(forKey: list.namespace) {
            ids.removeAll { $0 == list.id }
            if !ids.isEmpty { listIDs[list.namespace] = ids }
        }
        return list
    }
}
