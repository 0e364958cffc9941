import ChecklistClient
import ChecklistConformance
import ChecklistTesting
import Foundation

/// A real `checklistd` run with `--tokens`: two namespaces, `alice` and
/// `bob`, one token each. The tokens file lives in its own temporary
/// directory so that tests can rewrite it and send SIGHUP.
final class TokenServer: Sendable {
    static let alice = "alice-7f3c9a1e5b2d4c6f8a0b1c2d"
    static let bob = "bob-2e4f6a8c0d1b3e5f7a9c0e1f"
    static let defaultTokens = """
        # tokens for the integration tests
        \(alice) alice
        \(bob)   bob   # a comment after an entry

        """

    let server: TestServer
    let tokensDirectory: TemporaryDirectory
    var tokensPath: String { tokensDirectory.appending("tokens") }

    private init(server: TestServer, tokensDirectory: TemporaryDirectory) {
        self.server = server
        self.tokensDirectory = tokensDirectory
    }

    static func start(tokens: String = defaultTokens, _ arguments: [String] = [],
                      store: TestStore = .dataDirectory) throws -> TokenServer {
        let directory = try TemporaryDirectory(prefix: "checklistd-tokens")
        let path = directory.appending("tokens")
        try Self.write(tokens, to: path)
        return TokenServer(server: try TestServer.start(["--tokens", path] + arguments, store: store), tokensDirectory: directory)
    }

    static func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        _ = chmod(path, 0o600)
    }

    var port: UInt16 { server.port }
    var process: ServerProcess { server.process }

    /// The conformance target: alice's namespace, bob's as the second.
    var target: Target {
        Target(host: "127.0.0.1", port: port, token: Self.alice, secondToken: Self.bob, idle: .seconds(1))
    }

    func connect(token: String?, name: String = "integration-test") async throws -> ChecklistConnection {
        try await ChecklistConnection.connect(host: "127.0.0.1", port: port, clientName: name, token: token,
                                              timeout: .seconds(10), requestTimeout: .seconds(10))
    }

    /// Rewrites the tokens file, sends SIGHUP and waits for the reload's log line.
    func reload(_ tokens: String, expecting line: String = "reloaded") throws {
        let offset = process.standardErrorCount
        try Self.write(tokens, to: tokensPath)
        process.send(signal: SIGHUP)
        guard process.waitForStandardError(containing: line, after: offset, timeout: .seconds(10)) else {
            throw TestFailure("no \"\(line)\" on stderr after SIGHUP:\n\(process.standardError)")
        }
    }

    func stop() {
        server.stop()
        tokensDirectory.remove()
    }
}
