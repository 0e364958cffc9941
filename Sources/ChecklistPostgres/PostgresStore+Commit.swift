import ChecklistModel
import ChecklistStore

/// The bodies of the changes a commit wrote (the `changes.body` column,
/// `Change.encode`), per list in revision order: what a node that
/// committed them hands on without encoding them again (its commit notice).
public typealias StoredBodies = [ListID: [[UInt8]]]

/// What `PostgresStore.commit(locking:prepare:)` found once the rows were locked.
public struct LockedLists: Sendable {
    /// The revision of each locked list (a list absent is not stored).
    public var revisions: [ListID: Revision] = [:]
    /// The changes stored after each list's base (per list in revision
    /// order; none for a list still at its base), read right after the lock
    /// in the same flight: another node's commit the lock waited for is in
    /// them.
    public var changesAfterBases: [ListID: [Change]] = [:]

    public init(revisions: [ListID: Revision] = [:], changesAfterBases: [ListID: [Change]] = [:]) {
        self.revisions = revisions
        self.changesAfterBases = changesAfterBases
    }
}

extension PostgresStore {
    /// Commits `commits` in ONE transaction: every list's revision is
    /// checked against its base, rows and changes written, answers
    /// remembered. Either all of them are committed when this returns, or
    /// none is (the transaction rolled back) and it throws.
    ///
    /// Round trips: one (BEGIN, a statement per table the batch touches
    /// and COMMIT in one pipeline flight), whatever the batch's size.
    ///
    /// - Throws: `STALE_REVISION` with the refused lists in `lists` when a
    ///   base is not the committed revision, a deleted list is gone, or a
    ///   created list's id is taken; `CONNECTION_LOST` / `STATEMENT_FAILED`
    ///   from PostgreSQL. Nothing is written in either case.
    /// - Returns: the stored bodies of the changes written (`StoredBodies`).
    ///
    /// With `quotas` that bound something, the namespaces the batch changes
    /// are locked and their counts in the database checked first, in the
    /// same transaction (`Statements.checkQuotas`): a batch that would leave
    /// one past a quota it grows towards throws `QUOTA_EXCEEDED` naming it
    /// (`PostgresError.quota`), and nothing is written.
    @discardableResult
    public func commit(_ commits: [ListCommit], quotas: NamespaceQuotas? = nil) throws -> StoredBodies {
        try commit(commits, betweenFlights: nil, quotas: quotas)
    }

    /// As `commit(_:)`; with `betweenFlights`, BEGIN is a flight of its
    /// own and `betweenFlights` runs before the writes and COMMIT are sent
    /// (tests break the connection there).
    @discardableResult
    func commit(_ commits: [ListCommit], betweenFlights: (() throws -> Void)?, quotas: NamespaceQuotas? = nil) throws -> StoredBodies {
        guard !commits.isEmpty else { return [:] }
        let columns = try CommitColumns(commits)
        var flight = PostgresPipeline()
        connection.appendBegin(.commit, to: &flight)
        if let betweenFlights {
            do {
                _ = try connection.run(flight).get()
                try betweenFlights()
            } catch {
                connection.rollBackAfterFailure()
                throw error
            }
            flight = PostgresPipeline()
        }
        try write(columns, after: flight, quotas: quotas)
        return columns.bodiesByList
    }

    /// Commits in ONE transaction that first locks the rows of the lists
    /// of `bases` (`SELECT ... FOR UPDATE`, in id order) and reads the
    /// changes stored after each one's base, then hands both to `prepare`
    /// (`LockedLists`; a list absent from the revisions is not stored),
    /// which may read more in the same transaction and returns the commits
    /// to write. Another node's commit of a locked list waits until this
    /// transaction ends instead of losing to it, and the revisions
    /// `prepare` sees cannot move before the commit: the commits it makes
    /// against them pass the revision check.
    ///
    /// Round trips, whatever the batch's size: two (BEGIN, the lock and
    /// the read in one flight; the writes and COMMIT in another), plus
    /// what `prepare` reads; one when `bases` is empty.
    ///
    /// `whileWriting` runs once the writes and COMMIT are sent, before
    /// their answers are read (it must not use the connection).
    ///
    /// `quotas`: as `commit(_:quotas:)`, checked after `prepare`.
    ///
    /// - Throws: what `prepare` throws (the transaction is rolled back), or
    ///   as `commit(_:)`.
    /// - Returns: as `commit(_:)`.
    @discardableResult
    public func commit(locking bases: [(list: ListID, base: Revision)], quotas: NamespaceQuotas? = nil,
                       prepare: (_ locked: LockedLists) throws -> [ListCommit],
                       whileWriting: () -> Void = {}) throws -> StoredBodies {
        var flight = PostgresPipeline()
        connection.appendBegin(.commit, to: &flight)
        var locked = LockedLists()
        var begun = false
        let commits: [ListCommit]
        let columns: CommitColumns
        do {
            if !bases.isEmpty {
                var ids: [Int64?] = [], revisions: [Int64?] = []
                for (list, base) in bases {
                    ids.append(try PostgresValue.exactInt64(list.rawValue, "list id"))
                    revisions.append(try PostgresValue.exactInt64(base, "revision"))
                }
                let lock = flight.count
                flight.append(Statements.lockLists, [.int64Array(ids)])
                // A statement of its own: in READ COMMITTED it takes its
                // snapshot after the lock returned, so it sees the commit
                // the lock waited for.
                flight.append(Statements.changesAfterEach, [.int64Array(ids), .int64Array(revisions), .int64(.max)])
                begun = true
                let results = try connection.run(flight).get()
                let rows = results[lock]
                for row in 0..<rows.rowCount { locked.revisions[ListID(try rows.uint64(row, 0))] = try rows.uint64(row, 1) }
                locked.changesAfterBases = try Self.changesByList(results[lock + 1])
                flight = PostgresPipeline()
            }
            commits = try prepare(locked)
            columns = try CommitColumns(commits)
        } catch {
            if begun { connection.rollBackAfterFailure() }
            throw error
        }
        guard begun || !commits.isEmpty else { return [:] }
        try write(columns, after: flight, quotas: quotas, whileInFlight: whileWriting)
        return columns.bodiesByList
    }

    /// The stored changes of each list after its revision in `after`, per
    /// list in revision order (none for a list with nothing after it), at
    /// most `limit` per list (nil: all). In the caller's transaction, if
    /// any: one round trip for all of them.
    public func changes(after: [ListID: Revision], limit: Int? = nil) throws(PostgresError) -> [ListID: [Change]] {
        guard !after.isEmpty else { return [:] }
        var ids: [Int64?] = []
        var revisions: [Int64?] = []
        for (list, revision) in after {
            ids.append(try PostgresValue.exactInt64(list.rawValue, "list id"))
            revisions.append(try PostgresValue.exactInt64(revision, "revision"))
        }
        let most = limit.map { Int64(max($0, 0)) } ?? .max
        return try Self.changesByList(connection.execute(Statements.changesAfterEach,
                                                         [.int64Array(ids), .int64Array(revisions), .int64(most)]))
    }

    /// The rows of `Statements.changesAfterEach`, by list.
    private static func changesByList(_ rows: PostgresResult) throws(PostgresError) -> [ListID: [Change]] {
        var changes: [ListID: [Change]] = [:]
        for row in 0..<rows.rowCount {
            changes[ListID(try rows.uint64(row, 0)), default: []].append(try change(rows, row, column: 1))
        }
        return changes
    }

    /// Sends `start` (BEGIN when the transaction has not begun), the
    /// statements of the commit and COMMIT in one flight (`whileInFlight`
    /// runs once they are sent). A revision check
    /// that fails, or any other error, aborts the rest: the transaction is
    /// rolled back and it throws.
    private func write(_ columns: CommitColumns, after start: PostgresPipeline, quotas: NamespaceQuotas? = nil,
                       whileInFlight: () -> Void = {}) throws {
        var flight = start
        var checks: [(statement: Int, lists: CommitColumns.ListColumns, creates: Bool)] = []
        var quotaCheck: Int?
        if let quotas, quotas.isBounded, !columns.quota.ids.isEmpty {
            // The namespaces' rows exist (a first list's too) before they are locked.
            let namespaces = PostgresValue.textArray(columns.quota.touchedNamespaces)
            flight.append(Statements.addNamespaces, [namespaces])
            flight.append(Statements.lockNamespaces, [namespaces])
            quotaCheck = flight.count
            flight.append(Statements.checkQuotas, columns.quotaParameters(quotas))
        }
        if columns.created.count > 0 {
            flight.append(Statements.addNamespaces, [.textArray(columns.createdNamespaces)])
            checks.append((flight.count, columns.created, true))
            flight.append(Statements.insertLists, columns.insertParameters)
            flight.append(Statements.raiseNextListID, [.int64(columns.highestCreated + 1)])
        }
        if columns.updated.count > 0 {
            checks.append((flight.count, columns.updated, false))
            flight.append(Statements.updateLists, columns.updateParameters)
        }
        if columns.deleted.count > 0 {
            checks.append((flight.count, columns.deleted, false))
            flight.append(Statements.deleteLists, [
                .int64Array(columns.deleted.ids), .int64Array(columns.deleted.bases), .textArray(columns.deleted.namespaces)])
            flight.append(Statements.dropHistory, [.int64Array(columns.deleted.ids)])
        }
        if !columns.changeLists.isEmpty {
            flight.append(Statements.insertChanges, [
                .int64Array(columns.changeLists), .int64Array(columns.changeRevisions),
                .textArray(columns.changeNamespaces), .int64Array(columns.changeKinds), .byteaArray(columns.changeBodies)])
        }
        if !columns.answerClients.isEmpty {
            flight.append(Statements.insertAnswers, [
                .textArray(columns.answerNamespaces), .int64Array(columns.answerClients),
                .int64Array(columns.answerSequences), .int64Array(columns.answerLists),
                .int64Array(columns.answerRevisions), .byteaArray(columns.answerInserted)])
        }
        let commit = flight.count
        flight.append("COMMIT")

        let results = try connection.run(flight, whileInFlight: whileInFlight)
        if let failure = results.firstFailure {
            connection.rollBackAfterFailure()
            if failure.error.sqlState == Statements.revisionCheckFailed,
               let check = checks.first(where: { $0.statement == failure.index }) {
                throw try refusal(check.lists, creates: check.creates)
            }
            if failure.index == quotaCheck, failure.error.sqlState == Statements.quotaCheckFailed {
                throw Self.quotaRefusal(failure.error, namespaces: columns.quota.touchedNamespaces)
            }
            throw failure.error
        }
        guard try results.result(commit).commandStatus == "COMMIT" else {
            throw PostgresError(.statementFailed, "COMMIT ended in a rollback")
        }
    }

    /// The `STALE_REVISION` of a revision check that failed (the
    /// transaction is rolled back): the lists of `expected` the database
    /// does not hold at their base (`creates`: the created lists whose id is
    /// taken), read after the rollback; every list of `expected` when none
    /// differs any more (a namespace that did not match, or the database
    /// moved on).
    private func refusal(_ expected: CommitColumns.ListColumns, creates: Bool) throws -> PostgresError {
        let current = try connection.execute(Statements.revisions, [.int64Array(expected.ids)])
        var found: [Int64: Int64] = [:]
        for row in 0..<current.rowCount { found[try current.int64(row, 0)] = try current.int64(row, 1) }
        let pairs = zip(expected.ids, expected.bases).map { ($0 ?? 0, $1 ?? 0) }
        let differing = pairs.filter { id, base in creates ? found[id] != nil : found[id] != base }
        let refused = differing.isEmpty ? pairs : differing
        let detail = refused.map { id, base in
            let now = found[id].map { "revision \($0)" } ?? "no such list"
            return creates ? "list \(id) cannot be created: it exists (\(now))"
                : "list \(id): committed against revision \(base), the database has \(now)"
        }
        return PostgresError(.staleRevision, detail.joined(separator: "; "), lists: refused.map { ListID(UInt64($0.0)) })
    }
}
