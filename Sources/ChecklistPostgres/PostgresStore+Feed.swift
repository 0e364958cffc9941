import ChecklistModel

/// What the retained change feed can say about a list after a revision.
public enum FeedRead: Hashable, Sendable {
    /// The changes after the revision, oldest first, at most the limit;
    /// `complete` when they reach the list's current revision.
    case changes([Change], complete: Bool)
    /// The changes are not all retained (or the revision is ahead of the
    /// list): the client must reload the list.
    case resyncRequired
    /// No such list in the namespace (never made, or deleted).
    case noSuchList
}

extension PostgresStore {
    /// The changes of `list` after `revision`, as CHANGES_SINCE answers
    /// them, read in one snapshot of the database.
    public func changes(in namespace: Namespace, list: ListID, after revision: Revision,
                        limit: Int) throws -> FeedRead {
        let id = try PostgresValue.id(list.rawValue, "list id")
        let after = try PostgresValue.id(revision, "revision")
        return try connection.transaction(.readOnlySnapshot) {
            let bounds = try connection.execute(Statements.feedBounds, [id, .text(try StoredText.namespace(namespace))])
            guard bounds.rowCount == 1 else { return .noSuchList }
            let current = try bounds.uint64(0, 0)
            // Revisions (floor, current] are retained.
            let floor = bounds.isNull(0, 1) ? current : try bounds.uint64(0, 1) - 1
            guard revision >= floor, revision <= current else { return .resyncRequired }
            let rows = try connection.execute(Statements.changesAfter, [id, after, .int64(Int64(max(limit, 0)))])
            let changes = try (0..<rows.rowCount).map { row throws(PostgresError) in try Self.change(rows, row, column: 1) }
            return .changes(changes, complete: (changes.last?.revision ?? revision) == current)
        }
    }

    /// Drops, per list, the changes older than its last `retainPerList`,
    /// but never a change after the list's checkpoint (loads replay those).
    ///
    /// - Returns: the changes dropped.
    @discardableResult
    public func trimChanges(retainPerList: Int) throws(PostgresError) -> Int {
        try connection.execute(Statements.trimChanges, [.int64(Int64(retainPerList))]).affectedRows
    }

    /// Drops the deletion markers of lists deleted more than `seconds` ago.
    @discardableResult
    public func forgetDeletions(olderThan seconds: Int) throws(PostgresError) -> Int {
        try connection.execute(Statements.forgetDeletions, [.int64(Int64(seconds))]).affectedRows
    }
}
