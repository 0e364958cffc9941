import ChecklistModel

/// A frozen, consistent copy of every list in the store, and of its memory
/// of answered idempotency keys, taken by `Store.cut(_:)`. Reading it needs
/// no lock and never blocks the store; the store's later changes do not
/// show in it.
public struct StoreCut: Sendable {
    let lists: [ListID: ListState]
    let listIDs: [Namespace: [ListID]]
    /// The window of answered keys at the cut (a copy-on-write value).
    let idempotency: IdempotencyWindow
    /// The store's next list id at the cut.
    public let nextListID: ListID
    /// The patches of each list not settled at the cut (`PendingPatches`).
    var pending: [ListID: [PendingPatches.Entry]] = [:]
    /// `Store.rewrites` at the cut.
    var rewrites: [ListID: UInt64] = [:]

    /// How often `list`'s cached revisions had been rewritten at the cut
    /// (`Store.rewrites(of:)`): the cut's list is what was committed at its
    /// revision once its changes in flight committed, if the store's count
    /// is still this then.
    public func rewrites(of list: ListID) -> UInt64 { rewrites[list] ?? 0 }

    /// The store's memory of answered idempotency keys at the cut: exactly
    /// the keys of the patches the cut's lists hold (and those forgotten
    /// before), for a snapshot (Protocol/SNAPSHOT.md section 3.8). Built
    /// here, outside the store's lock.
    public var idempotencyMemory: IdempotencyMemory { idempotency.memory }

    /// Number of lists and rows in the cut.
    public var counts: (lists: Int, items: Int) {
        (lists.count, lists.values.reduce(0) { $0 + $1.itemCount })
    }

    /// Visits lists (ordered by id) with their rows in order, as
    /// `Store.exportLists` describes.
    @discardableResult
    public func exportLists<E: Error>(in ns: Namespace?,
                                      _ visit: (ExportedList, _ forEachRow: ((RowView) -> Void) -> Void) throws(E) -> Void) throws(E) -> ListID {
        let ids = ns.map { listIDs[$0] ?? [] } ?? lists.keys.sorted()
        for id in ids {
            guard let list = lists[id] else { continue }
            try visit(list.exported) { body in
                list.forEachKeyedRow(from: 0, limit: list.rows.count, body)
            }
        }
        return nextListID
    }
}

extension StoreCut {
    /// Whether the cut holds list `id` with its rows (not summary-only).
    public func holdsRows(of id: ListID) -> Bool {
        lists[id].map { $0.unloaded == nil } ?? false
    }

    /// Visits one list with its rows, as `exportLists` does; false when the
    /// cut holds no list with this id, or holds it summary-only (its rows in
    /// the database, `--cache-bytes`): a database upkeep checkpoints one
    /// list from a cut.
    public func exportList<E: Error>(_ id: ListID,
                                     _ visit: (ExportedList, _ forEachRow: ((RowView) -> Void) -> Void) throws(E) -> Void) throws(E) -> Bool {
        guard let list = lists[id], list.unloaded == nil else { return false }
        try visit(list.exported) { body in
            list.forEachKeyedRow(from: 0, limit: list.rows.count, body)
        }
        return true
    }
}

/// Builds one list from its rows in order, outside the store's lock
/// (see `Store.makeRestorer(for:)`).
public struct ListRestorer: ~Copyable {
    private let list: ExportedList
    private var builder: RowTreeBuilder
    private var keys = ClientKeyIndex()

    init(_ list: ExportedList, shape: RowTreeShape) throws(ChecklistError) {
        let summary = list.summary
        guard summary.id.rawValue != 0 else { throw .badField("list", "list id must not be 0") }
        guard !summary.name.isEmpty else { throw .badField("name", "name must not be empty") }
        guard summary.revision >= 1 else { throw .badField("revision", "revision must be at least 1") }
        self.list = list
        builder = RowTreeBuilder(shape: shape)
    }

    /// Appends the list's next row.
    ///
    /// - Throws: `.badField("id")` for an item id of 0, not below the
    ///   list's next item id, or appearing twice. Text limits are not
    ///   enforced (the data was accepted once).
    public mutating func append(_ item: Item) throws(ChecklistError) {
        try item.withView { (row) throws(ChecklistError) in try append(row) }
    }

    /// Appends the list's next row, its text lent (copied into the list),
    /// with the checks of `append(_: Item)`.
    public mutating func append(_ row: ImportedItems.View) throws(ChecklistError) {
        guard row.id.rawValue != 0, row.id < list.nextItemID else { throw idOutOfRange(row.id) }
        if let key = row.clientKey {
            try keys.checkFree(key, for: row.id, in: list.summary.id)
        }
        guard builder.append(row) else { throw .badField("id", "item id \(row.id) appears twice") }
        if let key = row.clientKey { keys.set(key, for: row.id) }
    }

    /// Appends a batch of the list's next rows, with the checks (and the
    /// errors, for the same first bad row) of appending them one by one.
    public mutating func append(_ batch: RowBatch) throws(ChecklistError) {
        // The first row whose id is out of range: the rows before it go in.
        let limit = batch.firstRow(idOutside: 1..<max(list.nextItemID.rawValue, 1)) ?? batch.count
        if let dup = builder.append(batch, limit: limit) {
            throw .badField("id", "item id \(batch.id(at: dup)) appears twice")
        }
        if limit < batch.count { throw idOutOfRange(batch.id(at: limit)) }
    }

    private func idOutOfRange(_ id: ItemID) -> ChecklistError {
        .badField("id", "item id \(id) is not below the list's next item id \(list.nextItemID)")
    }

    /// Rows appended so far.
    public var count: Int { builder.count }

    consuming func finish() -> ListState {
        let summary = list.summary
        builder.finish()
        return ListState(id: summary.id, namespace: list.namespace, name: summary.name, icon: summary.icon,
                         revision: summary.revision, nextItemID: list.nextItemID.rawValue, rows: builder.result, keys: keys)
    }
}

extension StoreCut {
    /// The cut with list `id` as it was at `revision`, its patches after
    /// that taken back (on a copy: the store is untouched): what a database
    /// holds for the list while the node's commits after `revision` are in
    /// flight (and may still be rebased). Itself when the list is at
    /// `revision`; nil when it is not held with its rows, or what lies
    /// after `revision` is not all pending patches.
    public func rolledBack(_ id: ListID, to revision: Revision) -> StoreCut? {
        guard var list = lists[id], list.unloaded == nil, list.revision >= revision else { return nil }
        guard list.revision > revision else { return self }
        let after = (pending[id] ?? []).filter { $0.revision > revision }
        guard after.first?.revision == revision + 1, after.last?.revision == list.revision,
              after.count == Int(list.revision - revision) else { return nil }
        for entry in after.reversed() { list.rollBack(entry.undo) }
        list.revision = revision
        var rolled = lists
        rolled[id] = list
        return StoreCut(lists: rolled, listIDs: listIDs, idempotency: idempotency, nextListID: nextListID)
    }
}
