import ChecklistCommandLine
import ChecklistClient
import ChecklistModel
import ChecklistWire
import ChecklistTesting
import Foundation

/// The server a scenario talks to: one it starts itself (the `checklistd`
/// built next to this binary, on 127.0.0.1 port 0 with a temporary data
/// directory, or on PostgreSQL with `--postgres CONNINFO`), or the ones
/// named by `--server HOST:PORT[,HOST:PORT...]` (nodes of one service:
/// each connection tries them in turn).
///
/// With `--tls`, every connection speaks TLS. A server of its own then gets
/// `--tls-cert/--tls-key` with throwaway certificates (`TestCertificates`,
/// made with the openssl command in a temporary directory), and the
/// connections trust their CA; the other `--tls-*` options are for `--server`.
final class BenchTarget {
    /// The servers to try, in order: the one started, or those of `--server`.
    private(set) var servers: [ServerAddress]
    /// The first server.
    var host: String { servers[0].host }
    var port: UInt16 { servers[0].port }
    /// The connections' TLS; nil: plaintext.
    let tls: TLSClientConfiguration?
    private var process: ServerProcess?
    /// With `--nodes N` (and `--postgres`): the other N-1 nodes on the same database.
    private var others: [ServerProcess] = []
    private let dataDirectory: TemporaryDirectory?
    /// The arguments the server this scenario started was started with (`restart`).
    private let serverArguments: [String]
    /// The throwaway certificates of a TLS server of our own.
    private let certificates: TestCertificates?

    init(_ args: BenchArguments, extraServerArguments: [String] = []) throws {
        let tlsOptions = try args.tlsOptions()
        if let address = args.string("server") {
            guard let servers = ServerAddress.list(parsing: address) else {
                throw UsageError("--server wants HOST:PORT[,HOST:PORT...], got '\(address)'")
            }
            self.servers = servers
            tls = try tlsOptions.configuration()
            process = nil
            dataDirectory = nil
            serverArguments = []
            certificates = nil
        } else {
            let named = [tlsOptions.caFile, tlsOptions.serverName, tlsOptions.certificateFile, tlsOptions.privateKeyFile]
            guard named.allSatisfy({ $0 == nil }) else {
                throw UsageError("--tls-ca, --tls-server-name, --tls-cert and --tls-key need --server; "
                                                + "the bench's own server uses throwaway certificates (just --tls)")
            }
            var serverArguments = ["--host", "127.0.0.1", "--port", "0"] + extraServerArguments
            if tlsOptions.enabled {
                let made = try TestCertificates.make()
                serverArguments += ["--tls-cert", made.server.certificateFile, "--tls-key", made.server.privateKeyFile]
                certificates = made
                tls = made.clientConfiguration()
            } else {
                certificates = nil
                tls = nil
            }
            let directory = try TemporaryDirectory(prefix: "checklist-bench")
            serverArguments += args.string("postgres").map { ["--postgres", $0] } ?? ["--data-dir", directory.path]
            self.serverArguments = serverArguments
            let server = try ServerProcess.start(executable: try ProductLocator.path(of: "checklistd"), arguments: serverArguments)
            servers = [ServerAddress(host: server.host, port: server.port)]
            process = server
            dataDirectory = directory
            let nodes = try args.int("nodes", default: 1, min: 1)
            guard nodes == 1 || args.string("postgres") != nil else {
                throw UsageError("--nodes needs --postgres: the nodes share one database")
            }
            for _ in 1..<nodes {
                others.append(try ServerProcess.start(executable: server.executablePath, arguments: serverArguments))
            }
        }
    }

    /// How many nodes this scenario started (1 for `--server`).
    var nodeCount: Int { 1 + others.count }

    /// Every node's host and port, the first one first.
    var nodeAddresses: [(host: String, port: UInt16)] {
        [(host, port)] + others.map { ($0.host, $0.port) }
    }

    /// Waits until every node (or the first only) lists `lists`: the others
    /// learn of them from the database within milliseconds.
    func waitForLists(_ lists: [ListID], onEveryNode: Bool) async throws {
        for node in 0..<(onEveryNode ? nodeCount : 1) {
            let connection = try await connect(name: "checklist-bench-wait", node: node)
            let deadline = ContinuousClock.now + .seconds(60)
            while Set(try await connection.lists().map(\.id)).isSuperset(of: lists) == false && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            await connection.close()
        }
    }

    /// `tls` or `plaintext`, for the reports.
    var transport: String { tls == nil ? "plaintext" : "tls" }

    /// The process id of the server this scenario started, if any.
    var serverPID: Int32? { process?.pid }

    /// Peak resident memory of the server this scenario started, if any.
    var serverPeakRssBytes: Int? { process?.peakResidentBytes }

    /// Stops the server this scenario started (SIGTERM) and starts it again
    /// on the same data directory; returns the time from starting the new
    /// process to its `listening on` line.
    func restart() throws -> Duration {
        guard let old = process else { throw BenchFailure(description: "cannot restart a --server") }
        old.stop()
        let started = ContinuousClock.now
        let server = try ServerProcess.start(executable: old.executablePath, arguments: serverArguments, readyTimeout: .seconds(300))
        let took = started.duration(to: .now)
        process = server
        servers = [ServerAddress(host: server.host, port: server.port)]
        return took
    }

    /// The server this scenario started, if any.
    var serverProcess: ServerProcess? { process }

    /// A client-library connection to node `node` (0: the first, or the
    /// servers `--server` names, tried in turn); `compression: false`
    /// announces no COMPRESSION, so no answer comes compressed.
    func connect(name: String = "checklist-bench", node: Int = 0, compression: Bool = true) async throws -> ChecklistConnection {
        guard node > 0, nodeCount > 1 else {
            return try await ChecklistConnection.connect(servers: servers, clientName: name, compression: compression, tls: tls)
        }
        let address = nodeAddresses[min(node, nodeCount - 1)]
        return try await ChecklistConnection.connect(host: address.host, port: address.port, clientName: name,
                                                     compression: compression, tls: tls)
    }

    func stop() {
        for other in others { other.stop() }
        process?.stop()
        dataDirectory?.remove()
        certificates?.directory.remove()
    }

    /// The list named `bench-N-items-B-bytes`, created and filled with `items`
    /// rows of `textBytes` bytes (every third one checked) if it is not
    /// there yet. Fills with pipelined full batches.
    func benchList(items: Int, textBytes: Int, on connection: ChecklistConnection) async throws -> ListSummary {
        let name = "bench-\(items)-items-\(textBytes)-bytes"
        if let existing = try await connection.lists().first(where: { $0.name == name && $0.itemCount == UInt64(items) }) {
            return existing
        }
        let list = try await connection.createList(name: name, icon: "Inbox")
        let batch = Int(connection.serverLimits.maxBatchOps)
        let text = String(repeating: "x", count: max(0, textBytes - 8))
        var next = 0
        let inFlight = 8
        while next < items {
            var requests: [ChecklistWire.Request] = []
            while requests.count < inFlight && next < items {
                let count = min(batch, items - next)
                let ops = (next..<next + count).map { i in
                    PatchOperation.insert(tempRef: nil, position: .end,
                                          fields: ItemFields(text: String(format: "%08d", i % 100_000_000) + text, checked: i % 3 == 0))
                }
                requests.append(.patch(Patch(list: list.id, ops: ops)))
                next += count
            }
            for answer in try await connection.send(batch: requests) {
                if case .error(let e) = answer { throw ClientError.server(e.error) }
            }
        }
        return try await connection.lists().first { $0.id == list.id } ?? list
    }
}
