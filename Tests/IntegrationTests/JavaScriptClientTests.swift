import ChecklistTesting
import Foundation
import Testing

/// The JavaScript client (Clients/js) has its own tests, run by Node's test
/// runner: every golden vector of Protocol/vectors both ways, the connection
/// and reconnecting client against an in-memory server, and against the
/// built checklistd (given to them in `CHECKLISTD`). This runs them as part
/// of the README's test command, so a change to the protocol, its vectors or
/// the server that the JavaScript client does not follow fails here too.
@Suite(.timeLimit(.minutes(5))) struct JavaScriptClientTests {
    /// The repository's root: this file is Tests/IntegrationTests/JavaScriptClientTests.swift.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `node` from PATH, or nil when it is not installed.
    static let node: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/node" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    @Test(.enabled(if: node != nil,
                   "node is not installed, so the JavaScript client's tests (node --test Clients/js/test/) are skipped"))
    func nodeTestRunnerPasses() throws {
        let tests = Self.repository.appendingPathComponent("Clients/js/test").path
        var environment = ProcessInfo.processInfo.environment
        let checklistd = try ProductLocator.path(of: "checklistd")
        environment["CHECKLISTD"] = checklistd
        let result = try ProcessRunner.run(executable: Self.node!, arguments: ["--test", tests],
                                           environment: environment, timeout: .seconds(180))
        #expect(result.status == 0, "node --test \(tests) failed:\n\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("# fail 0"), "node --test reported failures:\n\(result.stdout)")
        #expect(result.stdout.contains("# skipped 0"),
                "the tests against \(checklistd) did not run:\n\(result.stdout)")
    }
}
