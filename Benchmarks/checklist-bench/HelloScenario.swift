import ChecklistCommandLine
import ChecklistTesting
import Foundation

/// `checklist-bench hello`: connections a second that open with HELLO and
/// a static token (`--tokens`) against HELLO with a signed token (JWT) of
/// each algorithm (`--auth-keys`), one connection at a time: connect,
/// HELLO, HELLO_OK, close. The server's CPU per HELLO tells the cost of
/// verifying beside the rest. Keys and tokens come from Tests/JWT/jwt_mint.py
/// (PyJWT with cryptography), as in the tests.
enum HelloScenario {
    /// The scenario's options, for the parser and `--help`.
    static let spec = CommandSpec(
        name: "hello", summary: "connections a second opening with HELLO: a static token against a signed token (JWT) of each algorithm",
        details: "Server CPU per HELLO. Needs python3 with PyJWT and cryptography (Tests/JWT/jwt_mint.py mints the keys and tokens).",
        options: [
            .value("--connections", "N", "connections opened with each credential, one at a time (default 2000)"),
            BenchOptions.json,
        ])
    static let mint = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Tests/JWT/jwt_mint.py").standardized.path

    static func run(_ args: BenchArguments) throws {
        let connections = try args.int("connections", default: 2000, min: 1)
        let files = try TemporaryDirectory(prefix: "checklist-bench-hello")
        defer { files.remove() }
        _ = try python(["keys", files.path])
        let cases = try python(["cases", files.path, String(Int(Date().timeIntervalSince1970))])
        let tokens = try JSONSerialization.jsonObject(with: Data(cases.utf8)) as? [String: String] ?? [:]
        let staticToken = "bench-static-token-4f1c9a7e2b5d8c03"
        try Data("\(staticToken) alice\n".utf8).write(to: URL(fileURLWithPath: files.appending("tokens")))
        let server = try ServerProcess.start(executable: try ProductLocator.path(of: "checklistd"), arguments: [
            "--host", "127.0.0.1", "--port", "0", "--data-dir", files.appending("data"), "--tokens", files.appending("tokens"),
            "--auth-keys", files.appending("jwks.json"), "--auth-issuer", "https://id.example", "--auth-audience", "checklists",
        ])
        defer { server.stop() }

        var report = BenchReport()
        report.add("scenario", "hello")
        report.add("connections", connections)
        let credentials = [("static", staticToken)] + ["RS256", "ES256", "EdDSA", "HS256"].map { ($0, tokens["ok-\($0)"] ?? "") }
        for (name, token) in credentials {
            let cpuBefore = ResourceUsage.cpuMilliseconds(pid: server.pid)?.process ?? 0
            let started = ContinuousClock.now
            for _ in 0..<connections {
                let socket = try FrameSocket(host: "127.0.0.1", port: server.port, timeout: .seconds(10))
                try socket.handshake(features: [], token: token)
                socket.close()
            }
            let seconds = SnapshotScenario.seconds(started.duration(to: .now))
            let cpuMs = (ResourceUsage.cpuMilliseconds(pid: server.pid)?.process ?? 0) - cpuBefore
            report.add("\(name)ConnectionsPerSecond", Double(connections) / seconds)
            report.add("\(name)ServerCpuUsPerHello", cpuMs * 1000 / Double(connections))
            report.add("\(name)TokenBytes", token.utf8.count)
        }
        report.print(json: args.flag("json"))
    }

    private static func python(_ arguments: [String]) throws -> String {
        let out = try ProcessRunner.run(executable: "/usr/bin/env", arguments: ["python3", mint] + arguments)
        guard out.status == 0 else { throw BenchFailure(description: "jwt_mint.py (python3 with PyJWT and cryptography): \(out.stderr)") }
        return out.stdout
    }
}
