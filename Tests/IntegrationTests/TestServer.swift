import ChecklistClient
import ChecklistTesting
import Testing

/// Where a test server keeps its data: the tests that run against both
/// stores take this as their parameter.
enum TestStore: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case dataDirectory
    /// A fresh database of this test run's private cluster (`PostgresCluster.shared`).
    case postgres

    var testDescription: String { rawValue }

    /// Both stores, or the data directory alone on a machine without PostgreSQL.
    static var available: [TestStore] { PostgresCluster.binariesFound ? allCases : [.dataDirectory] }
}

/// A real `checklistd` from this build, on 127.0.0.1 port 0 with its own
/// temporary data directory (or its own PostgreSQL database); stopped (and
/// the directory removed) by `stop()`.
final class TestServer: Sendable {
    let process: ServerProcess
    let directory: TemporaryDirectory
    /// The database's connection string, for a server on PostgreSQL.
    let postgres: String?

    private init(process: ServerProcess, directory: TemporaryDirectory, postgres: String?) {
        self.process = process
        self.directory = directory
        self.postgres = postgres
    }

    /// Starts a server; on `directory` when given (to restart on the data
    /// of an earlier one), else on a fresh one.
    static func start(_ arguments: [String] = [], directory: TemporaryDirectory? = nil) throws -> TestServer {
        let directory = try directory ?? TemporaryDirectory(prefix: "checklistd-test")
        let process = try ServerProcess.start(
            executable: try ProductLocator.path(of: "checklistd"),
            arguments: ["--host", "127.0.0.1", "--port", "0", "--data-dir", directory.path] + arguments)
        return TestServer(process: process, directory: directory, postgres: nil)
    }

    /// Starts a server on `store`: a fresh data directory or database, or
    /// the database `postgres` (to restart on the data of an earlier one).
    static func start(_ arguments: [String] = [], store: TestStore, postgres: String? = nil) throws -> TestServer {
        guard store == .postgres else { return try start(arguments) }
        let conninfo = try postgres ?? PostgresCluster.freshSharedDatabase(prefix: "checklistd_test")
        let directory = try TemporaryDirectory(prefix: "checklistd-test")
        let process = try ServerProcess.start(
            executable: try ProductLocator.path(of: "checklistd"),
            arguments: ["--host", "127.0.0.1", "--port", "0", "--postgres", conninfo] + arguments)
        return TestServer(process: process, directory: directory, postgres: conninfo)
    }

    var port: UInt16 { process.port }

    /// - Parameter requestTimeout: how long each request may wait for its
    ///   answer (a test that must fail, not hang, on an unanswered request).
    func connect(name: String = "integration-test", requestTimeout: Duration? = nil) async throws -> ChecklistConnection {
        try await ChecklistConnection.connect(host: "127.0.0.1", port: port, clientName: name, requestTimeout: requestTimeout)
    }

    /// Kills the server with SIGKILL, like a crash; the data stays.
    func crash() {
        _ = process.kill()
    }

    /// Stops the server with SIGTERM and removes its data.
    func stop() {
        _ = process.stop()
        directory.remove()
    }
}
