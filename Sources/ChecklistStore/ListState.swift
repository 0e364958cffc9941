import ChecklistModel

/// One checklist inside the store: its header and its rows. A value type
/// held in `StoreState` (behind the store's lock) and always mutated in
/// place there, never copied.
struct ListState: Sendable {
    let id: ListID
    let namespace: Namespace
    var name: String
    var icon: String
    var revision: Revision
    /// The id the next inserted item gets. Only grows.
    var nextItemID: UInt64
    var rows: RowTree
    /// The items' client keys; empty for a list whose items have none.
    var keys: ClientKeyIndex

    init(id: ListID, namespace: Namespace, name: String, icon: String, revision: Revision,
         nextItemID: UInt64 = 1, rows: RowTree, keys: ClientKeyIndex = ClientKeyIndex()) {
        self.id = id
        self.namespace = namespace
        self.name = name
        self.icon = icon
        self.revision = revision
        self.nextItemID = nextItemID
        self.rows = rows
        self.keys = keys
    }

    var summary: ListSummary {
        ListSummary(id: id, name: name, icon: icon, itemCount: UInt64(rows.count),
                    uncheckedCount: UInt64(rows.uncheckedCount), revision: revision)
    }

    var exported: ExportedList {
        ExportedList(namespace: namespace, summary: summary, nextItemID: ItemID(nextItemID))
    }
}
