/// A statement the layer runs often: prepared once per connection
/// (`PQprepare`) on first use, then run by name (`PQexecPrepared`), so the
/// server plans it once. The SQL is a constant of this module; values only
/// ever travel as parameters.
public struct PostgresStatement: Hashable, Sendable {
    /// The prepared statement's name on the server (unique per statement).
    public let name: String
    public let sql: String

    public init(name: String, sql: StaticString) {
        self.name = name
        self.sql = sql.description
    }
}
