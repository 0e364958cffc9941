import ChecklistModel

// Reading a cut a piece at a time: an export that is written out over many
// requests resumes where it stopped (list, row) instead of walking the whole
// cut in one call.
extension StoreCut {
    /// The ids of `ns`'s lists in the cut, ascending.
    public func listIDs(in ns: Namespace) -> [ListID] {
        listIDs[ns] ?? []
    }

    /// List `id` as exported, if the cut has it in namespace `ns`.
    public func exportedList(_ id: ListID, in ns: Namespace) -> ExportedList? {
        guard let list = lists[id], list.namespace == ns else { return nil }
        return list.exported
    }

    /// Calls `body` for up to `limit` rows of list `id`, starting at row
    /// `offset`, in order; returns how many it visited. The `RowView`s are
    /// valid only inside `body`.
    @discardableResult
    public func forEachRow(of id: ListID, from offset: Int, limit: Int, _ body: (RowView) -> Void) -> Int {
        guard let list = lists[id] else { return 0 }
        var visited = 0
        list.forEachKeyedRow(from: offset, limit: limit) { row in
            visited += 1
            body(row)
        }
        return visited
    }
}
