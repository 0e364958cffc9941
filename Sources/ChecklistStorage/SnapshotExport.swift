import ChecklistModel
import ChecklistSnapshot
import ChecklistStore

/// Writes lists from a store cut into a snapshot, row by row, copying text
/// bytes straight from the store's storage.
///
/// The memory of answered idempotency keys (`writeIdempotency`) goes only
/// into the server's own snapshots (`DataDirectoryStorage.writeSnapshot`), never
/// into an export (EXPORT, `checklistd export`): it belongs to the server,
/// and one namespace's export must not carry other namespaces' keys
/// (Protocol/SNAPSHOT.md section 3.8).
public enum SnapshotExport {
    /// Writes the lists of `namespace` (every list when nil), in id order,
    /// each with its rows.
    public static func write(_ cut: StoreCut, namespace: Namespace?, to writer: SnapshotWriter) throws {
        try cut.exportLists(in: namespace) { (list, forEachRow) throws in
            let s = list.summary
            try writer.writeList(SnapshotList(namespace: list.namespace, id: s.id, name: s.name, icon: s.icon,
                                              revision: s.revision, nextItemID: list.nextItemID, itemCount: s.itemCount))
            try writeRows(to: writer, forEachRow)
        }
    }

    /// Writes each row `visit` hands over as an ITEM record, its text copied
    /// straight from the store, and returns what `visit` returns. The store's
    /// row visitors cannot throw, so the first failure skips the rows after
    /// it and is thrown once `visit` is done.
    /// Without `clientKeys` the items' client keys are left out.
    package static func writeRows<Visited>(to writer: SnapshotWriter, clientKeys: Bool = true,
                                   _ visit: ((RowView) -> Void) -> Visited) throws -> Visited {
        var failure: (any Error)?
        let visited = visit { row in
            guard failure == nil else { return }
            do {
                try row.withTextBytes { (text) throws(SnapshotError) in
                    try writer.writeItem(id: row.id, checked: row.checked, remind: row.remind, due: row.due, price: row.price,
                                         clientKey: clientKeys ? row.clientKey : nil, text: text)
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return visited
    }

    /// Writes `memory` (a cut's, after its lists) as IDEMPOTENCY records,
    /// client by client, least recently used first.
    public static func writeIdempotency(_ memory: IdempotencyMemory, to writer: SnapshotWriter) throws {
        for client in memory.clients {
            try writer.writeIdempotency(client)
        }
    }
}
