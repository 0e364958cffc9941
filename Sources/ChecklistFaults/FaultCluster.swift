import ChecklistSocket
import ChecklistTesting
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The system under test: a private PostgreSQL cluster, and `count`
/// `checklistd --postgres` nodes on one database of it, each reaching
/// PostgreSQL through a `DelayingRelay` of its own (zero latency) so the
/// nemesis can cut or stall that node's link alone. Everything binds
/// 127.0.0.1. A node is up when it printed its `listening on` line
/// (`ServerProcess`); a restarted node takes its old port again, so the
/// clients' addresses stay valid.
public final class FaultCluster: Sendable {
    public let postgres: PostgresCluster
    /// The database's connection string, straight to PostgreSQL (the nodes
    /// go through their relays): for looking at it with psql.
    public let conninfo: String
    public let relays: [DelayingRelay]
    public let statementTimeoutSeconds: Int
    private let executable: String
    private let nodes: Mutex<[ServerProcess?]>
    private let ports: Mutex<[UInt16]>
    /// Everything the nodes wrote to stderr before they were replaced (each
    /// node's last 64 KiB a life), for the report of a failed start.
    private let pastLogs = Mutex<[Int: [String]]>([:])

    /// Starts PostgreSQL and `count` nodes.
    public init(nodes count: Int, statementTimeoutSeconds: Int = 5, executable: String? = nil) throws {
        self.statementTimeoutSeconds = max(1, statementTimeoutSeconds)
        self.executable = try executable ?? ProductLocator.path(of: "checklistd")
        let postgres = try PostgresCluster(settings: ["synchronous_commit": "on"])
        self.postgres = postgres
        do {
            conninfo = try postgres.createDatabase("checklist_faults")
            relays = try (0..<count).map { _ in
                try DelayingRelay(to: SocketAddress(parsing: "127.0.0.1:\(postgres.port)"), latency: .zero,
                                  maximumConnections: 64)
            }
        } catch {
            postgres.stop()
            throw error
        }
        nodes = Mutex(Array(repeating: nil, count: count))
        ports = Mutex(Array(repeating: 0, count: count))
        do {
            for index in 0..<count { try start(index) }
        } catch {
            stop()
            throw error
        }
    }

    public var count: Int { relays.count }

    /// The node's connection string: PostgreSQL through its own relay.
    private func nodeConninfo(_ index: Int) -> String {
        "host=127.0.0.1 port=\(relays[index].port) user=postgres dbname=checklist_faults"
    }

    /// The arguments of node `index` on `port` (0: any).
    private func arguments(_ index: Int, port: UInt16) -> [String] {
        ["--host", "127.0.0.1", "--port", "\(port)", "--postgres", nodeConninfo(index),
         "--postgres-statement-timeout", "\(statementTimeoutSeconds)",
         // The checker reads every list's whole feed from revision 0.
         "--retain-changes", "10000000", "--log-level", "warn"]
    }

    /// Starts node `index` (again), on its old port when it had one; waits
    /// for its `listening on` line.
    public func start(_ index: Int) throws {
        let port = ports.withLock { $0[index] }
        var process: ServerProcess
        do {
            process = try ServerProcess.start(executable: executable, arguments: arguments(index, port: port), readyTimeout: .seconds(60))
        } catch where port != 0 {
            // The old port is taken (by another program meanwhile): any port,
            // and the clients follow the new address.
            process = try ServerProcess.start(executable: executable, arguments: arguments(index, port: 0), readyTimeout: .seconds(60))
        }
        if let old = nodes.withLock({ $0[index] }) {
            let log = String(old.standardError.suffix(65536))
            pastLogs.withLock { $0[index, default: []].append(log) }
        }
        nodes.withLock { $0[index] = process }
        ports.withLock { $0[index] = process.port }
    }

    /// The port node `index` listens on (its latest life).
    public func port(of index: Int) -> UInt16 { ports.withLock { $0[index] } }

    /// The node's current process (nil before its first start).
    public func process(_ index: Int) -> ServerProcess? { nodes.withLock { $0[index] } }

    /// Whether node `index` is running (not exited).
    public func isRunning(_ index: Int) -> Bool { process(index)?.exitStatus == nil }

    /// Sends `signal` to node `index` without waiting.
    public func signal(_ index: Int, _ signal: Int32) { process(index)?.send(signal: signal) }

    /// What node `index` wrote to stderr in its current life (the last 64 KiB)
    /// and earlier ones.
    public func log(of index: Int) -> String {
        let past = pastLogs.withLock { $0[index] ?? [] }
        return (past + [String((process(index)?.standardError ?? "").suffix(65536))]).joined(separator: "\n--- restarted ---\n")
    }

    /// Stops every node (SIGCONT first, so a paused one can exit), the
    /// relays and PostgreSQL.
    public func stop() {
        for index in 0..<count {
            guard let process = process(index) else { continue }
            process.send(signal: SIGCONT)
            process.stop(signal: SIGTERM, timeout: .seconds(10))
        }
        for relay in relays { relay.stop() }
        postgres.stop()
    }
}
