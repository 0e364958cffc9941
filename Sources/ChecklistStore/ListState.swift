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
    /// Set while the list's rows are not in memory (a PostgreSQL node's
    /// cache evicted them, or never loaded them: `Store+Residency.swift`):
    /// `rows` and `keys` are empty then and the counts are these.
    var unloaded: UnloadedCounts?

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
        ListSummary(id: id, name: name, icon: icon, itemCount: unloaded?.itemCount ?? UInt64(rows.count),
                    uncheckedCount: unloaded?.uncheckedCount ?? UInt64(rows.uncheckedCount), revision: revision)
    }

    /// Its number of items, in memory or not.
    var itemCount: Int { unloaded.map { Int($0.itemCount) } ?? rows.count }

    /// The UTF-8 bytes of its name, icon, item texts and client keys
    /// (`--quota-bytes`). For a list whose rows are not in memory, those
    /// counted when they were dropped (none when they never were loaded).
    var storedBytes: Int {
        name.utf8.count + icon.utf8.count + (rowBytes ?? 0)
    }

    /// The UTF-8 bytes of its item texts and client keys; nil for a list
    /// whose rows are not in memory and were never counted here.
    var rowBytes: Int? {
        guard let unloaded else { return rows.textBytes + keys.keyBytes }
        return unloaded.storedBytes
    }

    /// Calls `body` with up to `limit` rows from the `offset`-th, in list
    /// order, each with its client key. A list without keys hands the rows
    /// on as they are read (no copy of a row to fill in a key it lacks):
    /// a snapshot visits every row this way.
    func forEachKeyedRow(from offset: Int, limit: Int, _ body: (RowView) -> Void) {
        if keys.isEmpty {
            rows.forEachRow(filter: .all, from: offset, limit: limit, body)
        } else {
            rows.forEachRow(filter: .all, from: offset, limit: limit) { body($0.keyed(by: keys)) }
        }
    }

    /// Throws `UNAVAILABLE` for a list whose rows are not in memory: a
    /// request that reads or changes rows must have it loaded first (the
    /// server's list cache does so before dispatching it).
    func requireRows() throws(ChecklistError) {
        guard unloaded != nil else { return }
        throw ChecklistError(.unavailable, "list \(id) is not in memory; try again")
    }

    var exported: ExportedList {
        ExportedList(namespace: namespace, summary: summary, nextItemID: ItemID(nextItemID))
    }
}

/// The counts of a list whose rows are not in memory.
struct UnloadedCounts: Sendable, Hashable {
    var itemCount: UInt64
    var uncheckedCount: UInt64
    /// `ListState.storedBytes` of its rows when they were dropped; nil when
    /// this node never held them.
    var storedBytes: Int?
}
