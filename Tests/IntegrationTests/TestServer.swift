import ChecklistClient
import ChecklistTesting

/// A real `checklistd` from this build, on 127.0.0.1 port 0 with its own
/// temporary data directory; stopped (and the directory removed) by `stop()`.
final class TestServer: Sendable {
    let process: ServerProcess
    let directory: TemporaryDirectory

    private init(process: ServerProcess, directory: TemporaryDirectory) {
        self.process = process
        self.directory = directory
    }

    /// Starts a server; on `directory` when given (to restart on the data
    /// of an earlier one), else on a fresh one.
    static func start(_ arguments: [String] = [], directory: TemporaryDirectory? = nil) throws -> TestServer {
        let directory = try directory ?? TemporaryDirectory(prefix: "checklistd-test")
        let process = try ServerProcess.start(
            executable: try ProductLocator.path(of: "checklistd"),
            arguments: ["--host", "127.0.0.1", "--port", "0", "--data-dir", directory.path] + arguments)
        return TestServer(process: process, directory: directory)
    }

    var port: UInt16 { process.port }

    func connect(name: String = "integration-test") async throws -> ChecklistConnection {
        try await ChecklistConnection.connect(host: "127.0.0.1", port: port, clientName: name)
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
