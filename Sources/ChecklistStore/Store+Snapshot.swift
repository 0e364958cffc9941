import ChecklistModel

// Whole lists in and out: snapshots, export and import.
extension Store {
    /// Visits lists with their rows, for writing a snapshot or an export.
    ///
    /// The walk runs over a `StoreCut` taken at the call, outside the lock:
    /// one consistent cut of the store, and the store keeps serving meanwhile.
    ///
    /// - Parameter ns: only this namespace's lists, or all when nil.
    /// - Returns: the store's next list id as of the cut. A snapshot keeps it
    ///   and hands it to `restoreNextListID(_:)`, so that ids of lists
    ///   deleted before the snapshot are never given out again.
    @discardableResult
    public func exportLists<E: Error>(in ns: Namespace?,
                                      _ visit: (ExportedList, _ forEachRow: ((RowView) -> Void) -> Void) throws(E) -> Void) throws(E) -> ListID {
        let (cut, _) = self.cut { () }
        return try cut.exportLists(in: ns, visit)
    }

    /// Takes a consistent cut of the whole store in O(1) under the lock
    /// (lists and the memory of idempotency keys are copy-on-write values),
    /// also running `underLock` there, e.g. to read the log position the cut
    /// corresponds to. The cut's lists and its `idempotencyMemory` are of
    /// the same instant: every keyed patch the lists hold is remembered.
    ///
    /// The first change to a list after a cut copies the parts of that
    /// list's storage it touches (its leaf table, then the leaf): a one-time
    /// cost per list, paid by that change. Likewise the first keyed patch
    /// after a cut copies the window's tables (O(clients + remembered keys),
    /// a few milliseconds at its bounds).
    public func cut<R>(_ underLock: () -> R) -> (StoreCut, R) {
        locked { state in
            (StoreCut(lists: state.lists, listIDs: state.listIDs, idempotency: state.idempotency,
                      nextListID: ListID(state.nextListID), pending: state.pending?.byList ?? [:], rewrites: state.rewrites),
             underLock())
        }
    }

    /// Starts restoring one whole list: feed its rows in order with
    /// `ListRestorer.append`, then hand it to `finishRestore(_:)`. The rows
    /// are built outside the lock and never held as an array of items.
    public func makeRestorer(for list: ExportedList) throws(ChecklistError) -> ListRestorer {
        try ListRestorer(list, shape: treeShape)
    }

    /// Adds a list built by a `ListRestorer`. No change is committed and
    /// `onCommit` is not called.
    ///
    /// - Throws: `.conflict` if a list with this id exists.
    public func finishRestore(_ restorer: consuming ListRestorer) throws(ChecklistError) {
        let state = restorer.finish()
        try locked { store throws(ChecklistError) in
            guard store.lists[state.id] == nil else {
                throw ChecklistError(.conflict, "list \(state.id) already exists")
            }
            store.add(state)
        }
    }

    /// Puts a whole list back as exported: same id, name, icon, revision,
    /// rows (in the order given) and next item id. No change is committed
    /// and `onCommit` is not called: this loads state, it does not change it.
    ///
    /// The rows are collected before the store is locked, so a big list does
    /// not hold up the store while it loads.
    ///
    /// - Throws: `.conflict` if a list with this id exists; `.badField` for
    ///   an empty name ("name"), a revision of 0 ("revision"), an item id of 0,
    ///   not below `nextItemID` or appearing twice ("id"). Text limits are
    ///   not enforced (the data was accepted once).
    public func restoreList<Rows: Sequence<Item>>(_ list: ExportedList, rows: Rows) throws(ChecklistError) {
        var restorer = try makeRestorer(for: list)
        for item in rows { try restorer.append(item) }
        try finishRestore(restorer)
    }

    /// Raises the store-wide list id counter to at least `next` (from a
    /// snapshot, see `exportLists`). Never lowers it.
    public func restoreNextListID(_ next: ListID) {
        locked { state in
            state.nextListID = max(state.nextListID, next.rawValue)
        }
    }

    /// The id the next created list will get.
    public var nextListID: ListID {
        locked { ListID($0.nextListID) }
    }
}
