import ChecklistModel

/// Receives a snapshot's content during recovery or import, in file order:
/// `restoreHeader` once, then each list followed by its items in the list's
/// order, then (a server's own snapshot) the remembered idempotency keys
/// client by client, then `restoreEnd`. The lead adapts it to the Store; a
/// throw stops the load.
public protocol SnapshotRestoreSink {
    /// The snapshot's header (next list id, start LSN), before any list.
    func restoreHeader(_ header: SnapshotHeader) throws
    /// A list with its metadata; its `itemCount` items follow.
    func restoreList(_ list: SnapshotList) throws
    /// The next item of list `list`, appended at the end.
    func restoreItem(_ item: Item, in list: ListID) throws
    /// One client's remembered idempotency keys (a server's own snapshot,
    /// section 3.8 of Protocol/SNAPSHOT.md), after the lists. Recovery hands
    /// them over before it replays the log after the snapshot. The default
    /// ignores them (imports do).
    func restoreIdempotency(_ client: SnapshotIdempotency) throws
    /// The trailer was read and checked: the content is complete.
    func restoreEnd(_ trailer: SnapshotTrailer) throws
}

extension SnapshotRestoreSink {
    public func restoreIdempotency(_ client: SnapshotIdempotency) throws {}
    public func restoreEnd(_ trailer: SnapshotTrailer) throws {}
}
