import ChecklistTesting
import Foundation
import Testing

/// The recipe of docs/ACCESS.md, run as written: a key and its JWK Set made
/// with the `openssl` command (docs/examples/make-signing-key.sh), a token
/// signed with it (docs/examples/sign-token.sh), used by the real CLI.
@Suite(.timeLimit(.minutes(10))) struct SignedTokenOpenSSLTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../docs/examples").standardized.path

    static func script(_ name: String, _ arguments: [String]) throws -> String {
        let out = try ProcessRunner.run(executable: "/usr/bin/env", arguments: ["bash", "\(examples)/\(name)"] + arguments)
        guard out.status == 0 else { throw TestFailure("\(name) \(arguments): \(out.stderr)") }
        return out.stdout
    }

    @Test func aTokenSignedWithTheOpenSSLCommandOpensItsNamespaceInTheCLI() throws {
        let directory = try TemporaryDirectory(prefix: "openssl-jwt")
        defer { directory.remove() }
        let key = directory.appending("backend.pem"), jwks = directory.appending("jwks.json")
        try Data(try Self.script("make-signing-key.sh", [key, "backend-2026"]).utf8).write(to: URL(fileURLWithPath: jwks))
        let server = try TestServer.start(["--auth-keys", jwks, "--auth-issuer", "https://id.example"])
        defer { server.stop() }
        let cli = CLI(server: "127.0.0.1:\(server.port)")
        let carol = try Self.script("sign-token.sh", [key, "backend-2026", "carol", "600", "https://id.example"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let dave = try Self.script("sign-token.sh", [key, "backend-2026", "dave", "600", "https://id.example"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try cli.run("--token", carol, "create", "Carol's").status == 0)
        #expect(try cli.run("--token", carol, "lists").stdout.contains("Carol's"))
        let other = try cli.run("--token", dave, "lists")
        #expect(other.status == 0 && !other.stdout.contains("Carol's"))
        // Another issuer, signed by the same key: refused (exit 1, the server answered an error).
        let stranger = try Self.script("sign-token.sh", [key, "backend-2026", "carol", "600", "https://other.example"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let refused = try cli.run("--token", stranger, "lists")
        #expect(refused.status != 0 && refused.stderr.contains("NOT_AUTHENTICATED"), "\(refused.stderr)")
    }
}
