import ChecklistModel
import ChecklistSnapshot
import ChecklistStore

extension SnapshotRowBuilding {
    /// The leaves of `store`'s lists (`RowBatch`), built on a snapshot
    /// reader's workers: for a restore (`StoreRestoreSink`) and an IMPORT
    /// (`ImportStream`).
    package static func leaves(of store: Store) -> SnapshotRowBuilding {
        let prototype = RowBatchBuilder(for: store)
        return SnapshotRowBuilding { StoreRowBuilder(batch: prototype) }
    }
}

/// The store's leaves as a snapshot reader's workers build them.
private struct StoreRowBuilder: SnapshotRowBuilder {
    var batch: RowBatchBuilder
    mutating func append(_ row: ImportedItems.View) -> Bool { batch.append(row) }
    mutating func take() -> RowBatch { batch.take() }
}
