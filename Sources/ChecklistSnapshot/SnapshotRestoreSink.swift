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
    /// The same as `restoreItem(_:in:)`, with the item's text lent for the
    /// call (no `String` made per row: `SnapshotReader.readAll` calls this
    /// one). The default makes an `Item` and calls `restoreItem(_:in:)`.
    func restoreItem(_ row: ImportedItems.View, in list: ListID) throws
    /// One client's remembered idempotency keys (a server's own snapshot,
    /// section 3.8 of Protocol/SNAPSHOT.md), after the lists. Recovery hands
    /// them over before it replays the log after the snapshot. The default
    /// ignores them (imports do).
    func restoreIdempotency(_ client: SnapshotIdempotency) throws
    /// The trailer was read and checked: the content is complete.
    func restoreEnd(_ trailer: SnapshotTrailer) throws
    /// How this sink's rows are built on a reader's worker threads, for a
    /// reader made with it (`SnapshotReader(path:limits:inflateThreads:rowBuilding:)`,
    /// `SnapshotDecoder.streamed(name:limits:workers:rowBuilding:)`), or nil
    /// (the default): rows then come one by one.
    var rowBuilding: SnapshotRowBuilding? { get }
    /// The next rows of list `list`, appended at the end, as the sink's
    /// `rowBuilding` built them (its builder's `Rows`): in place of as many
    /// `restoreItem` calls, in the same order. The default throws.
    func restoreRows(_ rows: any Sendable, in list: ListID) throws
}

extension SnapshotRestoreSink {
    public func restoreItem(_ row: ImportedItems.View, in list: ListID) throws {
        try restoreItem(Item(id: row.id, fields: ItemFields(text: String(decoding: row.text, as: UTF8.self), checked: row.checked,
                                                             due: row.due, remind: row.remind, price: row.price)), in: list)
    }
    public func restoreIdempotency(_ client: SnapshotIdempotency) throws {}
    public func restoreEnd(_ trailer: SnapshotTrailer) throws {}
    public var rowBuilding: SnapshotRowBuilding? { nil }
    public func restoreRows(_ rows: any Sendable, in list: ListID) throws {
        throw SnapshotError(.misuse, "rows built on a worker for a sink without row building")
    }
}
