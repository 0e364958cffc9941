import ChecklistModel

// Whole lists in and out: snapshots, export and import.
extension Store {
    /// Visits lists with their rows, for writing a snapshot or an export.
    ///
    /// `visit` is called once per list, ordered by list id, with the list's
    /// header and a function that visits its rows in order (zero-copy
    /// `RowView`s, as in `withPage`). The whole walk happens under the
    /// store's lock, so it is one consistent cut of the store (every change
    /// `onCommit` saw before is in it, none after); the store is blocked
    /// meanwhile (the walk itself costs about 10 ns per row, plus what
    /// `visit` does), and `visit` must not call into the store.
    ///
    /// - Parameter ns: only this namespace's lists, or all when nil.
    /// - Returns: the store's next list id as of the cut. A snapshot keeps it
    ///   and hands it to `restoreNextListID(_:)`, so that ids of lists
    ///   deleted before the snapshot are never given out again.
    @discardableResult
    public func exportLists<E: Error>(in ns: Namespace?,
                                      _ visit: (ExportedList, _ forEachRow: ((RowView) -> Void) -> Void) throws(E) -> Void) throws(E) -> ListID {
        try locked { state throws(E) -> ListID in
            let ids: [ListID]
            if let ns {
                ids = state.listIDs[ns] ?? []
            } else {
                ids = state.lists.keys.sorted()
            }
            for id in ids {
                guard let list = state.lists[id] else { continue }
                try visit(list.exported) { body in
                    list.rows.forEachRow(filter: .all, from: 0, limit: list.rows.count, body)
                }
            }
            return ListID(state.nextListID)
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
        let summary = list.summary
        guard summary.id.rawValue != 0 else { throw .badField("list", "list id must not be 0") }
        guard !summary.name.isEmpty else { throw .badField("name", "name must not be empty") }
        guard summary.revision >= 1 else { throw .badField("revision", "revision must be at least 1") }
        var tree = RowTree(leafCapacity: treeShape.leafCapacity, innerCapacity: treeShape.innerCapacity)
        for item in rows {
            guard item.id.rawValue != 0, item.id < list.nextItemID else {
                throw .badField("id", "item id \(item.id) is not below the list's next item id \(list.nextItemID)")
            }
            guard !tree.contains(item.id) else { throw .badField("id", "item id \(item.id) appears twice") }
            tree.append(item)
        }
        let state = ListState(id: summary.id, namespace: list.namespace, name: summary.name, icon: summary.icon,
                              revision: summary.revision, nextItemID: list.nextItemID.rawValue, rows: tree)
        try locked { store throws(ChecklistError) in
            guard store.lists[summary.id] == nil else {
                throw ChecklistError(.conflict, "list \(summary.id) already exists")
            }
            store.add(state)
        }
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
