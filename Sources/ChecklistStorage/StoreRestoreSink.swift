import ChecklistModel
import ChecklistSnapshot
import ChecklistStore

/// Loads a snapshot into a `Store` (recovery, the PostgreSQL load, and the
/// PostgreSQL bench, which times exactly this path), list by list, one row at a time: a
/// 10M-row list is never held as an array of items. Remembered idempotency
/// keys go into the store's memory record by record (its bounds apply), so
/// recovery has them before it replays the log after the snapshot.
package final class StoreRestoreSink: SnapshotRestoreSink {
    private let store: Store
    private var current: ListRestorer?
    /// With `holdingNextListID`, the highest next list id the headers gave,
    /// not yet handed to the store.
    private var heldNextListID: ListID?

    /// - Parameter holdingNextListID: keep the headers' next list id until
    ///   `releaseNextListID()`, for a load that replays list creations after
    ///   the header (PostgreSQL: the stored counter is above them).
    package init(store: Store, holdingNextListID: Bool = false) {
        self.store = store
        heldNextListID = holdingNextListID ? ListID(0) : nil
    }

    package func restoreHeader(_ header: SnapshotHeader) throws {
        if let held = heldNextListID {
            heldNextListID = max(held, header.nextListID)
        } else {
            store.restoreNextListID(header.nextListID)
        }
    }

    /// Hands the held next list id to the store.
    package func releaseNextListID() {
        if let held = heldNextListID { store.restoreNextListID(held) }
    }

    package func restoreList(_ list: SnapshotList) throws {
        try finishCurrent()
        let summary = ListSummary(id: list.id, name: list.name, icon: list.icon, itemCount: 0, uncheckedCount: 0,
                                  revision: list.revision)
        current = try store.makeRestorer(for: ExportedList(namespace: list.namespace, summary: summary,
                                                            nextItemID: list.nextItemID))
    }

    package func restoreItem(_ item: Item, in list: ListID) throws {
        try item.withView { row in try restoreItem(row, in: list) }
    }

    package func restoreItem(_ row: ImportedItems.View, in list: ListID) throws {
        guard current != nil else { throw ChecklistError.badField("item", "an item came before any list") }
        try current!.append(row)  // in place: no move of the restorer per row
    }

    /// The store's leaves are built on the snapshot reader's workers.
    package var rowBuilding: SnapshotRowBuilding? { .leaves(of: store) }

    package func restoreRows(_ rows: any Sendable, in list: ListID) throws {
        guard let batch = rows as? RowBatch else {
            throw ChecklistError.badField("rows", "rows of type \(type(of: rows)), not the store's")
        }
        guard current != nil else { throw ChecklistError.badField("item", "an item came before any list") }
        try current!.append(batch)
    }

    package func restoreIdempotency(_ client: SnapshotIdempotency) throws {
        // Independent of the list being built: an extension record may come
        // anywhere, even between a list's items.
        store.restoreIdempotency(IdempotencyMemory(clients: [client]))
    }

    package func restoreEnd(_ trailer: SnapshotTrailer) throws {
        try finishCurrent()
    }

    /// Adds the list being built, if any.
    private func finishCurrent() throws {
        if let restorer = current.take() {
            try store.finishRestore(restorer)
        }
    }
}
