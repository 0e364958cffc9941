import ChecklistClient
import ChecklistSocket
import ChecklistTesting
import Foundation

/// PostgreSQL on a host of its own and `checklistd` nodes on hosts of their
/// own (`NetworkLab`, issue 13 "Separate hosts"):
///
///     test process --front--> node "n1" --database link--> host "db" (PostgreSQL)
///     test process --databaseFront--> host "db"
///
/// Each node has a `front` link to the test process (its clients) and its
/// own route to the database: a veth pair to the database host (cut it to
/// cut the node off), or a `DelayingRelay` in the test process that adds
/// latency on the way to the database's front. The database's own checks
/// (`psql`) use its Unix socket, so they work with every link cut.
///
/// A test with several nodes calls `startNode` once per node: each gets a
/// host and links of its own, all on the one database.
final class SeparateHosts: Sendable {
    /// Both a lab and a PostgreSQL cluster can be made here.
    static var available: Bool { PostgresCluster.binariesFound && NetworkLab.isAvailable }

    let lab: NetworkLab
    let databaseHost: LabHost
    /// The test process's link to the database host (for relays and checker nodes).
    let databaseFront: LabLink
    let cluster: PostgresCluster
    let database = "separate_hosts"

    init() throws {
        lab = try NetworkLab()
        databaseHost = try lab.addHost("db")
        databaseFront = try lab.link(.testProcess, databaseHost)
        // synchronous_commit on: an acknowledged commit is on disk.
        cluster = try PostgresCluster(settings: ["synchronous_commit": "on"], host: databaseHost)
        _ = try cluster.createDatabase(database)
    }

    /// How a node reaches the database.
    enum Route: Sendable {
        /// A veth pair of its own to the database host.
        case ownLink
        /// Through a `DelayingRelay` in the test process adding `latency`
        /// each way, over the node's front link and the database's front.
        case relay(latency: Duration)
    }

    /// Starts `checklistd --postgres` on a new host `name`, listening on
    /// its front link; waits for its `listening on` line.
    func startNode(_ name: String, route: Route, arguments: [String] = []) throws -> HostedNode {
        let host = try lab.addHost(name)
        let front = try lab.link(.testProcess, host)
        var databaseLink: LabLink?
        var relay: DelayingRelay?
        let conninfo: String
        switch route {
        case .ownLink:
            let link = try lab.link(host, databaseHost)
            databaseLink = link
            conninfo = cluster.conninfo(database: database, host: link.address(of: databaseHost))
        case .relay(let latency):
            let target = try SocketAddress(host: databaseFront.address(of: databaseHost), port: UInt16(cluster.port))
            let started = try DelayingRelay(listenHost: front.address(of: .testProcess), to: target, latency: latency)
            relay = started
            conninfo = "host=\(started.host) port=\(started.port) user=postgres dbname=\(database)"
        }
        let command = host.command(try ProductLocator.path(of: "checklistd"), [
            "--host", front.address(of: host), "--port", "0", "--insecure-bind", "--postgres", conninfo] + arguments)
        let process: ServerProcess
        do {
            process = try ServerProcess.start(executable: command.executable, arguments: command.arguments)
        } catch {
            relay?.stop()
            throw error
        }
        return HostedNode(host: host, front: front, databaseLink: databaseLink, relay: relay, process: process)
    }

    /// Starts a node in the test process's namespace on 127.0.0.1, on the
    /// database through its front: to read back what the database holds.
    func startCheckerNode() throws -> ServerProcess {
        try ServerProcess.start(executable: try ProductLocator.path(of: "checklistd"), arguments: [
            "--host", "127.0.0.1", "--port", "0",
            "--postgres", cluster.conninfo(database: database, host: databaseFront.address(of: databaseHost))])
    }

    /// Runs `sql` with psql on the database (over its Unix socket) and
    /// returns the rows, one a line, columns split by `|`.
    func query(_ sql: String) throws -> [[String]] {
        let result = try cluster.runClient("psql", ["-At", "-d", database, "-c", sql])
        guard result.status == 0 else { throw ChildProcessError("psql \(sql): \(result.stderr)") }
        return result.stdout.split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
    }

    /// Stops PostgreSQL and removes the lab (stop the nodes first).
    func remove() {
        cluster.stop()
        lab.remove()
    }
}

/// A `checklistd` on a lab host of its own.
final class HostedNode: Sendable {
    let host: LabHost
    /// The link to the test process: clients connect over it.
    let front: LabLink
    /// The node's own link to the database host (`Route.ownLink`).
    let databaseLink: LabLink?
    /// The relay on its way to the database (`Route.relay`).
    let relay: DelayingRelay?
    let process: ServerProcess

    init(host: LabHost, front: LabLink, databaseLink: LabLink?, relay: DelayingRelay?, process: ServerProcess) {
        self.host = host
        self.front = front
        self.databaseLink = databaseLink
        self.relay = relay
        self.process = process
    }

    func connect(name: String = "separate-hosts", requestTimeout: Duration? = nil) async throws -> ChecklistConnection {
        try await ChecklistConnection.connect(host: process.host, port: process.port, clientName: name,
                                              requestTimeout: requestTimeout)
    }

    /// Stops the node (SIGTERM: it commits what is queued) and its relay;
    /// how the node ended.
    @discardableResult
    func stop() -> ExitStatus? {
        defer { relay?.stop() }
        return process.stop(timeout: .seconds(30))
    }
}
