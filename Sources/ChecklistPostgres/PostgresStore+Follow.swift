import ChecklistModel

extension PostgresStore {
    /// The stored changes of `list` after `revision`, oldest first, at most
    /// `limit`: what a follower applies of another node's commits. Per list
    /// revisions are gap-free, so these are exactly the commits the caller
    /// has not seen, unless trimmed (then the first is not `revision + 1`).
    /// A deleted list's deletion marker is among them.
    public func changes(of list: ListID, after revision: Revision, limit: Int) throws(PostgresError) -> [Change] {
        let rows = try connection.execute(Statements.changesAfter, [
            try .id(list.rawValue, "list id"), try .id(revision, "revision"), .int64(Int64(max(limit, 0)))])
        return try (0..<rows.rowCount).map { row throws(PostgresError) in try Self.change(rows, row, column: 1) }
    }

    /// Every stored list's revision (a follower's reconciliation).
    public func listRevisions() throws(PostgresError) -> [ListID: Revision] {
        let rows = try connection.execute(Statements.allRevisions)
        var revisions: [ListID: Revision] = [:]
        revisions.reserveCapacity(rows.rowCount)
        for row in 0..<rows.rowCount { revisions[ListID(try rows.uint64(row, 0))] = try rows.uint64(row, 1) }
        return revisions
    }
}
