import ChecklistModel

extension PostgresStore {
    /// Commits `commits` in ONE transaction: every list's revision is
    /// checked against its base, rows and changes written, answers
    /// remembered. Either all of them are committed when this returns, or
    /// none is (the transaction rolled back) and it throws.
    ///
    /// Round trips: BEGIN, one statement per table the batch touches, COMMIT:
    /// 4 for a batch of patches, 5 when they carry idempotency keys, whatever
    /// the batch's size.
    ///
    /// - Throws: `STALE_REVISION` with the refused lists in `lists` when a
    ///   base is not the committed revision, a deleted list is gone, or a
    ///   created list's id is taken; `CONNECTION_LOST` / `STATEMENT_FAILED`
    ///   from PostgreSQL. Nothing is written in either case.
    public func commit(_ commits: [ListCommit]) throws {
        try commit(commits, afterStatement: {})
    }

    /// As `commit(_:)`, calling `afterStatement` between the statements of
    /// the transaction (tests break the connection there).
    func commit(_ commits: [ListCommit], afterStatement: () throws -> Void) throws {
        guard !commits.isEmpty else { return }
        try connection.transaction(.commit) { try write(commits, afterStatement: afterStatement) }
    }

    /// Commits in ONE transaction that first locks the rows of `lists`
    /// (`SELECT ... FOR UPDATE`, in id order), then hands their revisions
    /// (a list absent from the answer is not stored) to `prepare`, which
    /// may read more in the same transaction (`changes(after:)`) and
    /// returns the commits to write. Another node's commit of a locked list
    /// waits until this transaction ends instead of losing to it, and the
    /// revisions `prepare` sees cannot move before the commit: the commits
    /// it makes against them pass the revision check.
    ///
    /// Round trips: one more than `commit(_:)`, plus what `prepare` reads.
    ///
    /// - Throws: what `prepare` throws (the transaction is rolled back), or
    ///   as `commit(_:)`.
    public func commit(locking lists: [ListID], prepare: (_ revisions: [ListID: Revision]) throws -> [ListCommit]) throws {
        try connection.transaction(.commit) {
            var revisions: [ListID: Revision] = [:]
            if !lists.isEmpty {
                let ids = try lists.map { id throws(PostgresError) -> Int64? in try PostgresValue.exactInt64(id.rawValue, "list id") }
                let locked = try connection.execute(Statements.lockLists, [.int64Array(ids)])
                for row in 0..<locked.rowCount { revisions[ListID(try locked.uint64(row, 0))] = try locked.uint64(row, 1) }
            }
            let commits = try prepare(revisions)
            guard !commits.isEmpty else { return }
            try write(commits, afterStatement: {})
        }
    }

    /// The stored changes of each list after its revision in `after`, per
    /// list in revision order (none for a list with nothing after it). In
    /// the caller's transaction: one round trip for all of them.
    public func changes(after: [ListID: Revision]) throws(PostgresError) -> [ListID: [Change]] {
        guard !after.isEmpty else { return [:] }
        let entries = Array(after)
        var ids: [Int64?] = []
        var revisions: [Int64?] = []
        for (list, revision) in entries {
            ids.append(try PostgresValue.exactInt64(list.rawValue, "list id"))
            revisions.append(try PostgresValue.exactInt64(revision, "revision"))
        }
        let rows = try connection.execute(Statements.changesAfterEach, [.int64Array(ids), .int64Array(revisions)])
        var changes: [ListID: [Change]] = [:]
        for row in 0..<rows.rowCount {
            changes[ListID(try rows.uint64(row, 0)), default: []].append(try Self.change(rows, row, column: 1))
        }
        return changes
    }

    /// The statements of a commit, inside its transaction.
    private func write(_ commits: [ListCommit], afterStatement: () throws -> Void) throws {
        let columns = try CommitColumns(commits)
        if columns.created.count > 0 {
            try connection.execute(Statements.addNamespaces, [.textArray(columns.createdNamespaces)])
            try afterStatement()
            let inserted = try connection.execute(Statements.insertLists, columns.insertParameters)
            try refuseMissing(expected: columns.created, passed: inserted)
            try connection.execute(Statements.raiseNextListID, [.int64(columns.highestCreated + 1)])
            try afterStatement()
        }
        if columns.updated.count > 0 {
            let updated = try connection.execute(Statements.updateLists, columns.updateParameters)
            try refuseMissing(expected: columns.updated, passed: updated)
            try afterStatement()
        }
        if columns.deleted.count > 0 {
            let deleted = try connection.execute(Statements.deleteLists, [
                .int64Array(columns.deleted.ids), .int64Array(columns.deleted.bases), .textArray(columns.deleted.namespaces)])
            try refuseMissing(expected: columns.deleted, passed: deleted)
            try connection.execute(Statements.dropHistory, [.int64Array(columns.deleted.ids)])
            try afterStatement()
        }
        if !columns.changeLists.isEmpty {
            try connection.execute(Statements.insertChanges, [
                .int64Array(columns.changeLists), .int64Array(columns.changeRevisions),
                .textArray(columns.changeNamespaces), .int64Array(columns.changeKinds), .byteaArray(columns.changeBodies)])
            try afterStatement()
        }
        if !columns.answerClients.isEmpty {
            try connection.execute(Statements.insertAnswers, [
                .textArray(columns.answerNamespaces), .int64Array(columns.answerClients),
                .int64Array(columns.answerSequences), .int64Array(columns.answerLists),
                .int64Array(columns.answerRevisions), .byteaArray(columns.answerInserted)])
            try afterStatement()
        }
    }

    /// Throws `STALE_REVISION` naming the lists of `expected` whose row the
    /// statement did not return (their revision check failed).
    private func refuseMissing(expected: CommitColumns.ListColumns, passed: PostgresResult) throws {
        guard passed.rowCount < expected.count else { return }
        var passedIDs = Set<Int64>()
        for row in 0..<passed.rowCount { passedIDs.insert(try passed.int64(row, 0)) }
        let refused = zip(expected.ids, expected.bases).compactMap { id, base in
            passedIDs.contains(id ?? 0) ? nil : (id ?? 0, base ?? 0)
        }
        let current = try connection.execute(Statements.revisions, [.int64Array(refused.map(\.0))])
        var found: [Int64: Int64] = [:]
        for row in 0..<current.rowCount { found[try current.int64(row, 0)] = try current.int64(row, 1) }
        let detail = refused.map { id, base in
            let now = found[id].map { "revision \($0)" } ?? "no such list"
            return base == 0 ? "list \(id) cannot be created: it exists (\(now))"
                : "list \(id): committed against revision \(base), the database has \(now)"
        }
        throw PostgresError(.staleRevision, detail.joined(separator: "; "),
                            lists: refused.map { ListID(UInt64($0.0)) })
    }
}
