import CPostgres
#if canImport(Glibc)
import Glibc
#endif

/// The limits that let a node notice a dead database link in bounded time
/// (docs/POSTGRES.md, "A dead link"). A link cut by the network (a cable, a
/// firewall, a host gone) sends no RST: without them a blocking libpq call
/// on a database thread waits forever for an answer that cannot come.
///
/// Each is a **default**: it is added only when neither the connection
/// string nor the environment (libpq's `PGCONNECT_TIMEOUT`, a service file)
/// sets it, so an operator's own value always wins.
public enum LinkTimeouts {
    /// The libpq connection parameters added, in the order given to libpq.
    ///
    /// - `connect_timeout=10`: an attempt to connect (TCP, TLS, login) ends
    ///   after 10 s instead of the kernel's SYN retries (about 2 minutes).
    /// - `keepalives=1`, `keepalives_idle=5`, `keepalives_interval=2`,
    ///   `keepalives_count=3`: a connection waiting for an answer (or idle)
    ///   probes the server after 5 s of silence, and gives up when the
    ///   probes go unanswered.
    /// - `tcp_user_timeout=10000`: data sent and not acknowledged by the
    ///   server's kernel for 10 s ends the connection (without it the
    ///   kernel retransmits for about 15 minutes). With keepalives on, it
    ///   also bounds the probing.
    ///
    /// So a statement in flight on a dead link fails within about 15 s,
    /// and the connection is reported lost (`CONNECTION_LOST`).
    public static let clientDefaults: [(keyword: String, value: String)] = [
        ("connect_timeout", "10"),
        ("keepalives", "1"),
        ("keepalives_idle", "5"),
        ("keepalives_interval", "2"),
        ("keepalives_count", "3"),
        ("tcp_user_timeout", "10000"),
    ]

    /// Server settings for this session, each set only where the server's
    /// configuration (file, `ALTER ROLE/DATABASE ... SET`, the connection's
    /// `options`) leaves it at its built-in default: `tcp_keepalives_idle=5`,
    /// `tcp_keepalives_interval=2`, `tcp_keepalives_count=3`, the server's
    /// side of the same probing, so the backends of lost connections end
    /// instead of holding connection slots.
    ///
    /// A commit transaction also limits its own idle time
    /// (`TransactionMode.commit`: `SET LOCAL
    /// idle_in_transaction_session_timeout = '20s'`, under the same
    /// condition): a commit whose link was cut between two statements
    /// would hold its row locks until the server's own TCP gave up
    /// (hours), and the reconnected node's retry of the same batch would
    /// wait on them. Only commits: a load or an import legitimately spends
    /// time between its statements (decoding or encoding a large list).
    public static let serverDefaults: [(name: String, value: String)] = [
        ("tcp_keepalives_idle", "5"),
        ("tcp_keepalives_interval", "2"),
        ("tcp_keepalives_count", "3"),
    ]

    /// Applies `serverDefaults` to a session in one statement.
    static let applyServerDefaults: StaticString = """
        SELECT set_config(s.name, d.value, false)
        FROM pg_settings s
        JOIN unnest($1::text[], $2::text[]) AS d(name, value) ON d.name = s.name
        WHERE s.source = 'default'
        """

    /// One row when the server's configuration leaves
    /// `idle_in_transaction_session_timeout` at its default.
    static let idleInTransactionIsDefault: StaticString = """
        SELECT 1 FROM pg_settings WHERE name = 'idle_in_transaction_session_timeout' AND source = 'default'
        """

    /// Connects with `conninfo` plus the `clientDefaults` it and the
    /// environment do not set: the defaults come first in the keyword
    /// list and `conninfo` last (as an expanded `dbname`), and libpq keeps
    /// the last value of a keyword given twice.
    static func connect(_ conninfo: String) -> OpaquePointer? {
        let environment = environmentSettings
        let added = clientDefaults.filter { !environment.contains($0.keyword) }
        let keywords = added.map(\.keyword) + ["dbname"]
        let values = added.map(\.value) + [conninfo]
        return withCStrings(keywords) { keywords in
            withCStrings(values) { values in PQconnectdbParams(keywords, values, 1) }
        }
    }

    /// The keywords of `clientDefaults` that libpq's defaults already give a
    /// value (from the environment or a service file; libpq compiles in
    /// none for them).
    private static var environmentSettings: Set<String> {
        guard let options = PQconndefaults() else { return [] }
        defer { PQconninfoFree(options) }
        let wanted = Set(clientDefaults.map(\.keyword))
        var found: Set<String> = []
        var option = options
        while let keyword = option.pointee.keyword {
            let name = String(cString: keyword)
            if wanted.contains(name), let value = option.pointee.val, value.pointee != 0 { found.insert(name) }
            option += 1
        }
        return found
    }

    /// Calls `body` with `strings` as a NULL-terminated array of C strings.
    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { UnsafePointer(strdup($0)) } + [nil]
        defer { for copy in copies { free(UnsafeMutablePointer(mutating: copy)) } }
        return copies.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
