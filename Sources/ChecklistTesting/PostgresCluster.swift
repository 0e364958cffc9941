import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A private PostgreSQL cluster for a test run or a benchmark: `initdb` into
/// a temporary directory, `pg_ctl start` on a free port of 127.0.0.1 with
/// the socket directory inside it, stopped (and the directory removed) by
/// `stop()`. Never a system-wide service.
///
/// On a host of its own (`NetworkLab`): given a `host`, the server runs in
/// that network namespace (`ip netns exec`), listens on `listenAddresses`
/// there (`*`: every address of the namespace) on port 5432, and the
/// cluster's own client programs (`createDatabase`, `runClient`) reach it
/// through its Unix socket, which does not depend on any link: checks of
/// the database work while the host's links are cut. It trusts logins
/// from the subnets of its links (`samenet` in pg_hba.conf).
///
/// PostgreSQL refuses to run as root: when this process is root, `initdb`
/// and `pg_ctl` run as the `postgres` OS user (`runuser -u postgres --`) on
/// a directory that user owns. Readiness is `pg_ctl start -w` (which
/// watches the server's pid file) confirmed by `pg_isready`, never a sleep.
public final class PostgresCluster: Sendable {
    /// Why the cluster cannot be made, when it cannot.
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    public let binDirectory: String
    public let port: Int
    /// Where the cluster's client programs connect: 127.0.0.1, or the
    /// socket directory for a cluster on a lab host.
    public let clientHost: String
    private let directory: TemporaryDirectory
    private let dataDirectory: String
    private let runAsPostgres: Bool

    /// The directory of PostgreSQL's programs: `$CHECKLIST_PG_BINDIR`, or
    /// the newest `/usr/lib/postgresql/*/bin` that has `initdb`; nil if the
    /// machine has none.
    public static func findBinaries() -> String? {
        if let dir = ProcessInfo.processInfo.environment["CHECKLIST_PG_BINDIR"], !dir.isEmpty { return dir }
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return versions.compactMap(Int.init).sorted().reversed().lazy
            .map { "\(root)/\($0)/bin" }
            .first { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }
    }

    /// Makes and starts a cluster.
    ///
    /// - Parameters:
    ///   - settings: extra server settings (`-c name=value`), e.g.
    ///     `["synchronous_commit": "on"]`. fsync stays on unless given.
    ///   - host: the lab host to run on; nil for this process's namespace.
    ///   - listenAddresses: PostgreSQL's `listen_addresses`; nil is
    ///     127.0.0.1 in this process's namespace and `*` on a lab host.
    /// - Throws: `Unavailable` without PostgreSQL binaries; a
    ///   `ChildProcessError` naming the command that failed, with its output.
    public init(settings: [String: String] = [:], host: LabHost? = nil, listenAddresses: String? = nil) throws {
        guard let bin = Self.findBinaries() else {
            throw Unavailable(description: "no PostgreSQL binaries (looked in /usr/lib/postgresql/*/bin and $CHECKLIST_PG_BINDIR); install the Debian package postgresql")
        }
        binDirectory = bin
        runAsPostgres = geteuid() == 0
        directory = try TemporaryDirectory(prefix: "checklists-pg")
        let home = directory.appending("cluster")
        dataDirectory = home + "/data"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false)
        if runAsPostgres {
            guard let user = getpwnam("postgres") else {
                throw Unavailable(description: "running as root and there is no postgres OS user to run PostgreSQL as")
            }
            // The postgres user must reach its directory through ours.
            chmod(directory.path, 0o711)
            chown(home, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        try Self.check(Self.run(bin + "/initdb", ["-D", dataDirectory, "-U", "postgres", "--auth=trust", "-E", "UTF8",
                                                  "--locale=C", "--no-sync"], asPostgres: runAsPostgres), "initdb")
        let onLabHost = host?.namespace != nil
        clientHost = onLabHost ? home : "127.0.0.1"
        if onLabHost {
            // initdb trusts only loopback and the socket: on its own host
            // the cluster trusts the hosts at the other end of its links too.
            guard let hba = FileHandle(forWritingAtPath: dataDirectory + "/pg_hba.conf") else {
                throw ChildProcessError("cannot open \(dataDirectory)/pg_hba.conf")
            }
            hba.seekToEndOfFile()
            hba.write(Data("host all all samenet trust\n".utf8))
            try hba.close()
        }
        // Quoted for the shell pg_ctl starts the server with ('*' must not glob).
        var options = ["-c listen_addresses='\(listenAddresses ?? (onLabHost ? "*" : "127.0.0.1"))'", "-k \(home)"]
        for (name, value) in settings.sorted(by: { $0.key < $1.key }) { options.append("-c \(name)=\(value)") }
        var lastFailure = ""
        for _ in 0..<5 {
            // A fresh namespace has every port free.
            let candidate = onLabHost ? 5432 : try Self.freePort()
            let start = try Self.run(bin + "/pg_ctl", ["start", "-w", "-t", "60", "-D", dataDirectory, "-l", home + "/server.log",
                                                      "-o", (options + ["-p \(candidate)"]).joined(separator: " ")],
                                     asPostgres: runAsPostgres, on: host)
            if start.status == 0 {
                port = candidate
                let ready = try ProcessRunner.run(executable: bin + "/pg_isready", arguments: ["-h", clientHost, "-p", String(port), "-t", "30"])
                try Self.check(ready, "pg_isready")
                return
            }
            // Most likely the port was taken between our probe and the bind.
            lastFailure = start.stdout + start.stderr + ((try? String(contentsOfFile: home + "/server.log", encoding: .utf8)) ?? "")
        }
        throw ChildProcessError("pg_ctl start failed 5 times: \(lastFailure)")
    }

    /// A libpq connection string for `database` on this cluster, reached
    /// at `host` (by default where the cluster's own clients connect; a
    /// node on another lab host gives the cluster's address on their link).
    public func conninfo(database: String = "postgres", host: String? = nil) -> String {
        "host=\(host ?? clientHost) port=\(port) user=postgres dbname=\(database)"
    }

    /// Creates an empty UTF8 database and returns its connection string.
    public func createDatabase(_ name: String) throws -> String {
        let result = try ProcessRunner.run(executable: binDirectory + "/createdb",
                                           arguments: ["-h", clientHost, "-p", String(port), "-U", "postgres", "-E", "UTF8",
                                                       "-T", "template0", name])
        try Self.check(result, "createdb \(name)")
        return conninfo(database: name)
    }

    /// Runs one of the cluster's client programs (psql, pgbench) against it.
    public func runClient(_ program: String, _ arguments: [String], timeout: Duration = .seconds(120)) throws -> ProcessRunner.Result {
        try ProcessRunner.run(executable: binDirectory + "/" + program,
                              arguments: ["-h", clientHost, "-p", String(port), "-U", "postgres"] + arguments, timeout: timeout)
    }

    /// How `pg_ctl` stops the server (its `-m` option).
    public enum ShutdownMode: String, Sendable {
        /// Every session is ended, then a clean shutdown.
        case fast
        /// Every server process quits at once, as in a crash: the restart
        /// runs crash recovery from the WAL.
        case immediate
    }

    /// Restarts the server (`pg_ctl restart -m fast`, or `-m immediate`: every
    /// session is ended, then the server starts again on the same port with
    /// the same settings) and waits until it accepts connections.
    public func restart(mode: ShutdownMode = .fast) throws {
        let home = String(dataDirectory.dropLast("/data".count))
        try Self.check(Self.run(binDirectory + "/pg_ctl", ["restart", "-w", "-t", "60", "-m", mode.rawValue, "-D", dataDirectory,
                                                          "-l", home + "/server.log"], asPostgres: runAsPostgres), "pg_ctl restart")
        let ready = try ProcessRunner.run(executable: binDirectory + "/pg_isready", arguments: ["-h", "127.0.0.1", "-p", String(port), "-t", "30"])
        try Self.check(ready, "pg_isready")
    }

    /// Stops the server (fast shutdown) and removes its directory.
    public func stop() {
        _ = try? Self.run(binDirectory + "/pg_ctl", ["stop", "-w", "-m", "fast", "-D", dataDirectory], asPostgres: runAsPostgres)
        directory.remove()
    }

    /// Runs one of the server's programs, as the postgres OS user when
    /// `asPostgres`, on lab host `host` when given.
    private static func run(_ program: String, _ arguments: [String], asPostgres: Bool,
                            on host: LabHost? = nil) throws -> ProcessRunner.Result {
        var command = asPostgres ? ("/usr/sbin/runuser", ["-u", "postgres", "--", program] + arguments) : (program, arguments)
        if let host { command = host.command(command.0, command.1) }
        return try ProcessRunner.run(executable: command.0, arguments: command.1, timeout: .seconds(120))
    }

    static func check(_ result: ProcessRunner.Result, _ what: String) throws {
        guard result.status == 0 else {
            throw ChildProcessError("\(what) exited with \(result.exitStatus): \(result.stdout)\(result.stderr)")
        }
    }

    /// A port of 127.0.0.1 nothing listens on right now (bound to port 0,
    /// read back, closed).
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ChildProcessError("socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else { throw ChildProcessError("bind 127.0.0.1:0: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
