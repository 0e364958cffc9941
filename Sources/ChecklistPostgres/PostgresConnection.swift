import CPostgres

/// One libpq connection (`PGconn *`), owned by this class and closed in
/// `deinit`.
///
/// **Threading:** not `Sendable`. A connection belongs to the one thread
/// that made it (a database thread of the server, a test): libpq is
/// blocking here, and a connection is one conversation with one backend.
/// The event loops never call it (docs/POSTGRES.md, "Threads").
///
/// **SQL:** every statement is a `StaticString` (a constant in the source),
/// and every value a `PostgresValue` parameter in binary format, so no SQL is
/// ever assembled from data. Results come back in binary format.
public final class PostgresConnection {
    let handle: OpaquePointer
    /// The statements prepared on this connection (by name).
    var prepared: Set<String> = []
    /// Whether `.commit` transactions limit their idle time: the server's
    /// configuration leaves `idle_in_transaction_session_timeout` at its default.
    private(set) var limitsAbandonedCommits = false
    /// Set when libpq would not leave pipeline mode after a flight (it
    /// cannot happen when every answer was read): the connection can run
    /// nothing more, so it reports itself lost.
    var stuckInPipeline = false
    /// How long one call may wait for the server's answer before its socket
    /// is shut down (`ReplyWatchdog`); nil: as long as the link limits let it.
    private(set) var replyLimit: Duration?
    /// Set once a call's answer did not come within `replyLimit`: the
    /// connection is lost.
    private(set) var replyTimedOut = false

    /// Connects with a libpq connection string (`host=... dbname=...`) or a
    /// `postgresql://` URI, and sets the client encoding to UTF8.
    ///
    /// The link limits of `LinkTimeouts` are added where `conninfo` and the
    /// environment leave them unset (libpq's `connect_timeout`, keepalives,
    /// `tcp_user_timeout`; the session's `idle_in_transaction_session_timeout`
    /// and server-side keepalives), so a dead link is noticed in bounded time.
    ///
    /// - Throws: `CONNECTION_FAILED` with libpq's message.
    public init(conninfo: String) throws(PostgresError) {
        guard let handle = LinkTimeouts.connect(conninfo) else {
            throw PostgresError(.connectionFailed, "libpq could not allocate a connection")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = Self.message(of: handle)
            PQfinish(handle)
            throw PostgresError(.connectionFailed, message)
        }
        guard PQsetClientEncoding(handle, "UTF8") == 0 else {
            let message = Self.message(of: handle)
            PQfinish(handle)
            throw PostgresError(.connectionFailed, "setting client_encoding UTF8: \(message)")
        }
        // Notices (e.g. "relation ... already exists, skipping") are not
        // errors; libpq would print them to stderr.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        self.handle = handle
        do {
            try execute(LinkTimeouts.applyServerDefaults, [.textArray(LinkTimeouts.serverDefaults.map(\.name)),
                                                           .textArray(LinkTimeouts.serverDefaults.map(\.value))])
            limitsAbandonedCommits = try execute(LinkTimeouts.idleInTransactionIsDefault).rowCount == 1
        } catch {
            throw PostgresError(.connectionFailed, "setting the session's link limits: \(error.message)", sqlState: error.sqlState)
        }
    }

    deinit { PQfinish(handle) }

    /// The server process serving this connection (`pg_backend_pid()`).
    public var backendPID: Int32 { PQbackendPID(handle) }

    /// False once the connection broke; it must then be replaced.
    public var isUsable: Bool { !stuckInPipeline && !replyTimedOut && PQstatus(handle) == CONNECTION_OK }

    /// Sets this session's `statement_timeout`: a statement running longer
    /// (waiting for a lock included) is cancelled by the server and fails
    /// with `STATEMENT_FAILED`, SQLSTATE 57014. Nil: no limit.
    ///
    /// It also bounds every later call on the client's side: one whose
    /// answer has not come `timeout` plus `replyMargin` after it started (a
    /// link that passes no bytes, so the server's own cancel cannot arrive
    /// either) fails with `CONNECTION_LOST` and the connection is lost.
    public func setStatementTimeout(_ timeout: Duration?) throws(PostgresError) {
        let milliseconds = timeout.map { max(1, $0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000) } ?? 0
        try execute("SELECT set_config('statement_timeout', $1, false)", [.text(String(milliseconds))])
        replyLimit = timeout.map { $0 + Self.replyMargin }
    }

    /// Bounds every later call on the client's side, as `setStatementTimeout`
    /// does, without a server-side statement timeout: for connections whose
    /// statements may rightly run long (loads of big lists), so that a link
    /// passing no bytes still ends them.
    public func limitReplies(to limit: Duration?) {
        replyLimit = limit
    }

    /// What a call is given beyond the statement timeout before the link
    /// counts as stalled: the server cancels a slow statement at the
    /// timeout, and its answer needs a round trip to arrive.
    public static let replyMargin: Duration = .seconds(1)

    /// Runs one blocking libpq call under `replyLimit` (`ReplyWatchdog`).
    func bounded<R>(_ call: () -> R) -> R {
        guard let replyLimit, !replyTimedOut else { return call() }
        let socket = PQsocket(handle)
        guard socket >= 0 else { return call() }
        let token = ReplyWatchdog.shared.arm(socket: socket, limit: replyLimit)
        let result = call()
        if ReplyWatchdog.shared.disarm(token) { replyTimedOut = true }
        return result
    }

    /// The error of a call the watchdog cut off.
    var replyTimeoutError: PostgresError {
        PostgresError(.connectionLost, "no answer from the server within \(replyLimit ?? .zero): the link passes no bytes; the connection was dropped")
    }

    /// The value libpq uses for connection parameter `keyword` on this
    /// connection (`PQconninfo`), e.g. `"10000"` for `tcp_user_timeout`;
    /// nil when it has none.
    public func parameter(_ keyword: String) -> String? {
        guard let options = PQconninfo(handle) else { return nil }
        defer { PQconninfoFree(options) }
        var option = options
        while let name = option.pointee.keyword {
            if String(cString: name) == keyword { return option.pointee.val.map { String(cString: $0) } }
            option += 1
        }
        return nil
    }

    /// The server's version as an integer, e.g. 150013.
    public var serverVersion: Int { Int(PQserverVersion(handle)) }

    /// Runs one statement with `parameters` ($1, $2, ...) via `PQexecParams`.
    @discardableResult
    public func execute(_ sql: StaticString, _ parameters: [PostgresValue] = []) throws(PostgresError) -> PostgresResult {
        let text = sql.description
        return try run(parameters) { count, types, values, lengths, formats in
            PQexecParams(handle, text, count, types, values, lengths, formats, 1)
        }
    }

    /// Runs a prepared statement, preparing it on this connection first if
    /// this is its first use here.
    @discardableResult
    public func execute(_ statement: PostgresStatement, _ parameters: [PostgresValue] = []) throws(PostgresError) -> PostgresResult {
        if !prepared.contains(statement.name) {
            let types = parameters.map(\.oid)
            let result = bounded {
                types.withUnsafeBufferPointer { types in
                    PQprepare(handle, statement.name, statement.sql, Int32(types.count), types.baseAddress)
                }
            }
            _ = try check(result)
            prepared.insert(statement.name)
        }
        return try run(parameters) { count, _, values, lengths, formats in
            PQexecPrepared(handle, statement.name, count, values, lengths, formats, 1)
        }
    }

    /// Runs constant SQL that may hold several statements and takes no
    /// parameters (schema steps), via `PQexec`.
    public func executeScript(_ sql: StaticString) throws(PostgresError) {
        _ = try check(bounded { PQexec(handle, sql.description) })
    }

    /// How a transaction sees the database.
    public enum TransactionMode: Sendable {
        /// READ COMMITTED, read-write: imports, checkpoints, migrations.
        case readWrite
        /// READ COMMITTED, read-write, for a node's commits: left idle by
        /// its client for 20 s (its link cut between two statements), the
        /// server ends it, so its row locks never block the retry of the
        /// same batch on a new connection (`LinkTimeouts`). Unless the
        /// server's configuration sets `idle_in_transaction_session_timeout`.
        case commit
        /// REPEATABLE READ, READ ONLY: one snapshot for every statement, for
        /// loads that read a checkpoint and the changes after it.
        case readOnlySnapshot
    }

    /// Runs `body` in a transaction: BEGIN, then COMMIT if `body` returns,
    /// ROLLBACK if it throws (when the connection still works). A COMMIT the
    /// server turns into a rollback throws `STATEMENT_FAILED`.
    public func transaction<R>(_ mode: TransactionMode = .readWrite, _ body: () throws -> R) throws -> R {
        switch mode {
        case .readWrite: try executeScript("BEGIN")
        case .commit where limitsAbandonedCommits:
            // One round trip: PQexec sends both statements at once.
            try executeScript("BEGIN; SET LOCAL idle_in_transaction_session_timeout = '20s'")
        case .commit: try executeScript("BEGIN")
        case .readOnlySnapshot: try executeScript("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        }
        let value: R
        do {
            value = try body()
        } catch {
            if isUsable { try? executeScript("ROLLBACK") }
            throw error
        }
        let result = try check(bounded { PQexec(handle, "COMMIT") })
        guard result.commandStatus == "COMMIT" else {
            throw PostgresError(.statementFailed, "COMMIT ended in a rollback")
        }
        return value
    }

    /// Appends the BEGIN of a `mode` transaction to `pipeline`, as
    /// `transaction` begins one (`.commit`: with its `SET LOCAL`, a
    /// statement of its own since a pipeline takes no scripts).
    func appendBegin(_ mode: TransactionMode, to pipeline: inout PostgresPipeline) {
        switch mode {
        case .readWrite: pipeline.append("BEGIN")
        case .commit where limitsAbandonedCommits:
            pipeline.append("BEGIN")
            pipeline.append("SET LOCAL idle_in_transaction_session_timeout = '20s'")
        case .commit: pipeline.append("BEGIN")
        case .readOnlySnapshot: pipeline.append("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        }
    }

    /// Rolls back the transaction a failure left open (or failed), when
    /// the connection still works; a lost connection ends it on the server.
    func rollBackAfterFailure() {
        if isUsable { try? executeScript("ROLLBACK") }
    }

    /// Encodes the parameters into one buffer and calls `send` with
    /// libpq's parallel arrays, all in binary format.
    private func run(_ parameters: [PostgresValue],
                     _ send: (Int32, UnsafePointer<UInt32>?, UnsafePointer<UnsafePointer<CChar>?>?,
                              UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> OpaquePointer?) throws(PostgresError) -> PostgresResult {
        try check(bounded { Self.withEncoded(parameters, send) })
    }

    /// Encodes `parameters` into one buffer and calls `body` with libpq's
    /// parallel arrays (count, type OIDs, values, lengths, formats), all in
    /// binary format. The pointers are valid only inside `body`.
    static func withEncoded<R>(_ parameters: [PostgresValue],
                               _ body: (Int32, UnsafePointer<UInt32>?, UnsafePointer<UnsafePointer<CChar>?>?,
                                        UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> R) -> R {
        var buffer: [UInt8] = []
        var spans: [(offset: Int, count: Int)?] = []
        spans.reserveCapacity(parameters.count)
        for parameter in parameters {
            let start = buffer.count
            spans.append(parameter.encode(into: &buffer) ? (start, buffer.count - start) : nil)
        }
        buffer.append(0) // so that an empty value still has a valid, non-null address
        let types = parameters.map(\.oid)
        let lengths = spans.map { Int32($0?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: parameters.count)
        return buffer.withUnsafeBufferPointer { bytes in
            let base = UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self)
            let values: [UnsafePointer<CChar>?] = spans.map { span in span.map { base + $0.offset } }
            return body(Int32(parameters.count), types, values, lengths, formats)
        }
    }

    /// Turns a libpq result into a `PostgresResult`, or the error it holds.
    func check(_ raw: OpaquePointer?) throws(PostgresError) -> PostgresResult {
        if replyTimedOut {
            if let raw { PQclear(raw) }
            throw replyTimeoutError
        }
        guard let raw else {
            throw PostgresError(isUsable ? .statementFailed : .connectionLost, Self.message(of: handle))
        }
        let result = PostgresResult(taking: raw)
        switch PQresultStatus(raw) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return result
        default:
            let state = PQresultErrorField(raw, cpostgres_diag_sqlstate()).map { String(cString: $0) }
            let text = PQresultErrorMessage(raw).map { String(cString: $0) } ?? Self.message(of: handle)
            let lost = !isUsable || (state.map(Self.meansConnectionLost) ?? false)
            throw PostgresError(lost ? .connectionLost : .statementFailed, Self.trimmed(text), sqlState: state)
        }
    }

    /// SQLSTATE classes that end the session: connection exceptions (08)
    /// and operator intervention (57P01 admin shutdown, 57P02 crash
    /// shutdown, 57P03 cannot connect now).
    static func meansConnectionLost(_ state: String) -> Bool {
        state.hasPrefix("08") || state == "57P01" || state == "57P02" || state == "57P03"
    }

    static func message(of handle: OpaquePointer) -> String {
        trimmed(PQerrorMessage(handle).map { String(cString: $0) } ?? "unknown libpq error")
    }

    private static func trimmed(_ text: String) -> String {
        var text = text
        while text.last == "\n" || text.last == " " { text.removeLast() }
        return text
    }
}
