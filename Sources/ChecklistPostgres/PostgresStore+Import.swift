import ChecklistModel
import ChecklistSnapshot

/// The open transaction of an import: each list added replaces the stored
/// list with its id (or creates it) as a fresh checkpoint, and drops that
/// list's older history.
public struct PostgresImport: ~Copyable {
    let connection: PostgresConnection
    fileprivate(set) var highestID: UInt64 = 0
    public fileprivate(set) var lists = 0

    /// Adds a list whose items were written to `checkpoint` (finished here).
    public mutating func add(_ checkpoint: ListCheckpointBuilder) throws {
        let list = checkpoint.list
        let parts = try checkpoint.finish()
        let namespace = try StoredText.namespace(list.namespace)
        let name = StoredText.columns(list.name)
        let icon = StoredText.columns(list.icon)
        let id = try PostgresValue.id(list.id.rawValue, "list id")
        let revision = try PostgresValue.id(list.revision, "revision")
        try connection.execute(Statements.addNamespaces, [.textArray([namespace])])
        try connection.execute(Statements.upsertList, [
            id, .text(namespace), .text(name.text), .text(icon.text), name.exact.map { .bytea($0) } ?? .null,
            icon.exact.map { .bytea($0) } ?? .null, try .id(list.itemCount, "item count"),
            try .id(checkpoint.uncheckedCount, "unchecked count"), revision, try .id(list.nextItemID.rawValue, "next item id")])
        try connection.execute(Statements.dropCheckpoint, [id])
        try connection.execute(Statements.insertCheckpoint, [
            id, revision, .int64Array(parts.indices.map { Int64($0) }), .byteaArray(parts)])
        try connection.execute(Statements.dropHistory, [.int64Array([try PostgresValue.exactInt64(list.id.rawValue, "list id")])])
        highestID = max(highestID, list.id.rawValue)
        lists += 1
    }
}

extension PostgresStore {
    /// Runs an import as ONE transaction: the lists `body` adds are all
    /// stored, or (it throws, or PostgreSQL fails) none is.
    ///
    /// - Returns: the lists imported.
    @discardableResult
    public func importLists(_ body: (inout PostgresImport) throws -> Void) throws -> Int {
        try connection.transaction {
            var transaction = PostgresImport(connection: connection)
            try body(&transaction)
            if transaction.highestID > 0 {
                try connection.execute(Statements.raiseNextListID, [try .id(transaction.highestID + 1, "list id")])
            }
            return transaction.lists
        }
    }

    /// Imports a whole snapshot (`checklistd import --postgres`): every
    /// list as it stands in the file, in one transaction. A snapshot that
    /// turns out damaged part-way leaves the database as it was.
    @discardableResult
    public func importSnapshot(_ reader: SnapshotReader) throws -> Int {
        try importLists { transaction in
            var current: ListCheckpointBuilder?
            while let record = try reader.next() {
                switch record {
                case .list(let list):
                    if let done = current { try transaction.add(done) }
                    current = try ListCheckpointBuilder(list: list, createdAt: reader.header.createdAt)
                case .item(let item):
                    try current?.append(item)
                case .idempotency:
                    break // an export's lists only; a server's memory stays its own
                }
            }
            if let done = current { try transaction.add(done) }
            try connection.execute(Statements.raiseNextListID, [try .id(reader.header.nextListID.rawValue, "list id")])
        }
    }
}
