import ChecklistModel
import ChecklistPersistence
import ChecklistStore

/// Writes lists from a store cut into a snapshot, row by row, copying text
/// bytes straight from the store's storage.
public enum SnapshotExport {
    public static func write(_ cut: StoreCut, namespace: Namespace?, to writer: SnapshotWriter) throws {
        try cut.exportLists(in: namespace) { (list, forEachRow) throws in
            let s = list.summary
            try writer.writeList(SnapshotList(namespace: list.namespace, id: s.id, name: s.name, icon: s.icon,
                                              revision: s.revision, nextItemID: list.nextItemID, itemCount: s.itemCount))
            var failure: (any Error)?
            forEachRow { row in
                guard failure == nil else { return }
                do {
                    try writer.writeItem(id: row.id, checked: row.checked, remind: row.remind, due: row.due, price: row.price) { w in
                        row.withTextBytes { w.writeBytes($0) }
                    }
                } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
        }
    }
}
