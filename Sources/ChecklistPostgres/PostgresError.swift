import ChecklistModel

/// An error of the PostgreSQL layer: a code to decide on, a message for a
/// person, and what PostgreSQL itself said.
///
/// `message` carries libpq's `PQerrorMessage` / the server's error text;
/// `sqlState` the five-character SQLSTATE when the server sent one (e.g.
/// `40001`, `57P01` for a terminated backend, `23505` for a unique
/// violation).
public struct PostgresError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as a value to switch on. New codes may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        /// The server could not be reached or refused the login.
        public static let connectionFailed = Code(name: "CONNECTION_FAILED")
        /// The connection broke while in use (server gone, backend terminated).
        public static let connectionLost = Code(name: "CONNECTION_LOST")
        /// The server refused a statement; `sqlState` says why.
        public static let statementFailed = Code(name: "STATEMENT_FAILED")
        /// A result did not have the shape the layer expects (column type, count).
        public static let unexpectedResult = Code(name: "UNEXPECTED_RESULT")
        /// The database's schema is newer than this binary knows.
        public static let schemaTooNew = Code(name: "SCHEMA_TOO_NEW")
        /// A commit's base revision was not the list's committed revision
        /// (or a created list's id was taken): nothing of the batch was written.
        public static let staleRevision = Code(name: "STALE_REVISION")
        /// A value PostgreSQL cannot hold as given (an id above 2^63-1, a
        /// NUL in a namespace).
        public static let unsupportedValue = Code(name: "UNSUPPORTED_VALUE")
        /// Stored bytes that do not decode (a damaged checkpoint or change).
        public static let corruptData = Code(name: "CORRUPT_DATA")
        /// The layer was called against its contract.
        public static let misuse = Code(name: "MISUSE")
        /// A commit would leave a namespace past a quota it grows towards,
        /// counted in the database: nothing of the batch was written.
        /// `quota` says which namespace and which quota.
        public static let quotaExceeded = Code(name: "QUOTA_EXCEEDED")
        public var description: String { name }
    }

    public var code: Code
    public var message: String
    /// The SQLSTATE the server reported, if any.
    public var sqlState: String?
    /// For `STALE_REVISION`: the lists whose check failed, so a committer
    /// can answer those and retry the rest of its batch.
    public var lists: [ListID]
    /// For `QUOTA_EXCEEDED`: the namespace past its quota, and the
    /// `QUOTA_EXCEEDED` its requests are answered with (field `lists`,
    /// `items` or `bytes`).
    public var quota: (namespace: Namespace, refusal: ChecklistError)? {
        get { quotaNamespace.flatMap { ns in quotaRefusal.map { (ns, $0) } } }
        set {
            quotaNamespace = newValue?.namespace
            quotaRefusal = newValue?.refusal
        }
    }
    private var quotaNamespace: Namespace?
    private var quotaRefusal: ChecklistError?

    public init(_ code: Code, _ message: String, sqlState: String? = nil, lists: [ListID] = []) {
        self.code = code
        self.message = message
        self.sqlState = sqlState
        self.lists = lists
    }

    public var description: String {
        sqlState.map { "\(code) [\($0)]: \(message)" } ?? "\(code): \(message)"
    }
}
