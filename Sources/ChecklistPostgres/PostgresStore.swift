import ChecklistModel
import ChecklistStore

/// The store operations the server needs, over one `PostgresConnection`
/// (docs/POSTGRES.md): load lists, commit batches with revision checks,
/// checkpoints, the change feed, the idempotency memory and imports.
///
/// Not `Sendable`, like its connection: each database thread owns one
/// store object and its connection. Every method is one or more
/// transactions; none leaves one open.
public final class PostgresStore {
    public let connection: PostgresConnection

    /// Wraps `connection`; call `migrate()` once at start.
    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// Connects and brings the schema up to date.
    public convenience init(conninfo: String) throws {
        self.init(connection: try PostgresConnection(conninfo: conninfo))
        try migrate()
    }

    /// Creates or upgrades the schema (see `SchemaMigration`).
    @discardableResult
    public func migrate() throws -> SchemaMigration.Report {
        try SchemaMigration.migrate(connection)
    }

    /// The id the next created list gets, store-wide.
    public func nextListID() throws(PostgresError) -> ListID {
        let result = try connection.execute(Statements.nextListID)
        return ListID(try result.uint64(0, 0))
    }

    /// Takes `count` list ids for this node to give out, so that nodes on
    /// one database never give out the same id; returns the first.
    public func reserveListIDs(_ count: Int) throws(PostgresError) -> ListID {
        let result = try connection.execute(Statements.reserveListIDs, [.int64(Int64(count))])
        return ListID(try result.uint64(0, 0) - UInt64(count))
    }

    /// The lists of `namespace` in id order, as LIST_LISTS shows them.
    public func lists(in namespace: Namespace) throws(PostgresError) -> [ExportedList] {
        let result = try connection.execute(Statements.listsInNamespace, [.text(try StoredText.namespace(namespace))])
        return try (0..<result.rowCount).map { row throws(PostgresError) in try Self.record(result, row, namespace: namespace) }
    }

    /// Every list's row, of every namespace, in id order: what a node that
    /// loads rows on first use knows of the lists at start.
    public func allLists() throws(PostgresError) -> [ExportedList] {
        let result = try connection.execute(Statements.allLists)
        return try (0..<result.rowCount).map { row throws(PostgresError) in
            try Self.record(result, row, namespace: Namespace(try result.string(row, 10) ?? ""))
        }
    }

    /// One list's row, or nil.
    public func list(_ id: ListID) throws(PostgresError) -> ExportedList? {
        let result = try connection.execute(Statements.listByID, [try .id(id.rawValue, "list id")])
        guard result.rowCount == 1 else { return nil }
        return try Self.record(result, 0, namespace: Namespace(try result.string(0, 10) ?? ""))
    }

    /// Decodes the columns `Statements.listColumns` names.
    static func record(_ r: PostgresResult, _ row: Int, namespace: Namespace) throws(PostgresError) -> ExportedList {
        let summary = ListSummary(id: ListID(try r.uint64(row, 0)),
                                  name: try StoredText.value(text: try r.string(row, 1), exact: r.bytes(row, 3)),
                                  icon: try StoredText.value(text: try r.string(row, 2), exact: r.bytes(row, 4)),
                                  itemCount: try r.uint64(row, 5), uncheckedCount: try r.uint64(row, 6),
                                  revision: try r.uint64(row, 7))
        return ExportedList(namespace: namespace, summary: summary, nextItemID: ItemID(try r.uint64(row, 8)))
    }
}
