import ChecklistModel

extension PostgresStore {
    /// Stores `checkpoint` (finished here) as its list's checkpoint, unless
    /// the list is gone, already has a checkpoint at or past its revision,
    /// or is behind it. The changes after the new checkpoint stay; those at
    /// or before it become trimmable (`trimChanges`).
    ///
    /// - Returns: whether the checkpoint was stored.
    @discardableResult
    public func storeCheckpoint(_ checkpoint: ListCheckpointBuilder) throws -> Bool {
        let list = checkpoint.list
        let parts = try checkpoint.finish()
        let id = try PostgresValue.id(list.id.rawValue, "list id")
        let revision = try PostgresValue.id(list.revision, "revision")
        return try connection.transaction {
            let row = try connection.execute(Statements.lockList, [id])
            guard row.rowCount == 1 else { return false }
            let current = try row.uint64(0, 0)
            let stored = try row.uint64(0, 1)
            guard stored < list.revision, list.revision <= current else { return false }
            try connection.execute(Statements.dropCheckpoint, [id])
            try connection.execute(Statements.insertCheckpoint, [
                id, revision, .int64Array(parts.indices.map { Int64($0) }), .byteaArray(parts)])
            try connection.execute(Statements.setCheckpointRevision, [id, revision])
            return true
        }
    }

    /// Lists with at least `changes` changes after their checkpoint, or
    /// whose changes after it hold at least `bytes` bytes (an IMPORT is one
    /// change holding the whole list, and a load would replay it), most
    /// changes first: what a background compaction should checkpoint next.
    public func compactionCandidates(changes: Int, bytes: Int = .max, limit: Int) throws(PostgresError) -> [ListID] {
        let result = try connection.execute(Statements.compactionCandidates,
                                             [.int64(Int64(changes)), .int64(Int64(limit)), .int64(Int64(clamping: bytes))])
        return try (0..<result.rowCount).map { row throws(PostgresError) in ListID(try result.uint64(row, 0)) }
    }

    /// Claims the next checkpoint of `list` for this connection's session,
    /// so that the upkeeps of several nodes do not all build the same one:
    /// true when no other session holds the claim and the list is still due
    /// (at least `changes` changes, or `bytes` bytes of them, after its
    /// checkpoint: a node that stored one since `compactionCandidates` named
    /// the list makes it not due). A claim that is not kept is let go at
    /// once; a kept one lasts until `releaseCheckpoint(of:)` or the
    /// connection's end.
    public func claimCheckpoint(of list: ListID, changes: Int, bytes: Int = .max) throws(PostgresError) -> Bool {
        let key = PostgresValue.int32(Int32(truncatingIfNeeded: list.rawValue))
        guard try connection.execute(Statements.claimCheckpoint, [key]).bool(0, 0) else { return false }
        let due = try connection.execute(Statements.checkpointDue, [
            .int64(try PostgresValue.exactInt64(list.rawValue, "list id")), .int64(Int64(changes)), .int64(Int64(clamping: bytes))])
        if try due.int64(0, 0) > 0 { return true }
        try releaseCheckpoint(of: list)
        return false
    }

    /// Lets go of a claim `claimCheckpoint(of:changes:bytes:)` kept.
    public func releaseCheckpoint(of list: ListID) throws(PostgresError) {
        _ = try connection.execute(Statements.releaseCheckpoint, [.int32(Int32(truncatingIfNeeded: list.rawValue))])
    }
}
