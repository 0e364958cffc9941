import ChecklistConformance
import ChecklistModel
import ChecklistSocket
import ChecklistTesting
import ChecklistWire
import Foundation
import Testing

/// A real `checklistd` with `--auth-keys`: signing keys and tokens made by
/// an independent implementation (PyJWT with cryptography,
/// Tests/JWT/jwt_mint.py), beside a `--tokens` file with a static token for
/// the same namespace `alice`.
final class SignedTokenServer: Sendable {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../JWT/jwt_mint.py").standardized.path
    static let staticAlice = "static-alice-9c1f3e5a7b"

    let server: TestServer
    let keys: TemporaryDirectory
    var keysPath: String { keys.appending("jwks.json") }

    private init(server: TestServer, keys: TemporaryDirectory) {
        self.server = server
        self.keys = keys
    }

    static func python(_ arguments: [String]) throws -> String {
        let out = try ProcessRunner.run(executable: "/usr/bin/env", arguments: ["python3", script] + arguments)
        guard out.status == 0 else { throw TestFailure("jwt_mint.py \(arguments): \(out.stderr)") }
        return out.stdout
    }

    /// Keys with kids `rsa-1`, `ec-1`, `ed-1`, `hs-1`; the issuer and audience jwt_mint.py's cases expect.
    static func start(_ arguments: [String] = []) throws -> SignedTokenServer {
        let keys = try TemporaryDirectory(prefix: "checklistd-jwks")
        _ = try python(["keys", keys.path])
        try TokenServer.write("\(staticAlice) alice\n", to: keys.appending("tokens"))
        let server = try TestServer.start(["--auth-keys", keys.appending("jwks.json"), "--tokens", keys.appending("tokens"),
                                           "--auth-issuer", "https://id.example", "--auth-audience", "checklists",
                                           "--metrics-port", "0"] + arguments)
        return SignedTokenServer(server: server, keys: keys)
    }

    /// Every case of jwt_mint.py, signed now.
    func cases() throws -> [String: String] {
        let now = Int(Date().timeIntervalSince1970)
        let json = try Self.python(["cases", keys.path, String(now)])
        return try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String])
    }

    /// One token of `kid` for `namespace`, expiring at `exp` (seconds since 1970).
    func token(kid: String, namespace: String = "alice", exp: Int) throws -> String {
        try Self.python(["token", keys.path, kid, namespace, String(exp)]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    var port: UInt16 { server.port }
    var process: ServerProcess { server.process }

    func socket() throws -> FrameSocket {
        try FrameSocket(host: "127.0.0.1", port: port, timeout: .seconds(10))
    }

    /// Sends SIGHUP and waits for `line` on stderr.
    func reload(expecting line: String) throws {
        let offset = process.standardErrorCount
        process.send(signal: SIGHUP)
        guard process.waitForStandardError(containing: line, after: offset, timeout: .seconds(10)) else {
            throw TestFailure("no \"\(line)\" on stderr after SIGHUP:\n\(process.standardError)")
        }
    }

    /// The /metrics text.
    func metrics() throws -> String {
        let line = try #require(process.standardOutput.split(separator: "\n").first { $0.contains("metrics on http://") })
        return try httpGet(try SocketAddress(parsing: String(line.split(separator: "/")[1])), path: "/metrics")
    }

    func stop() {
        server.stop()
        keys.remove()
    }
}
