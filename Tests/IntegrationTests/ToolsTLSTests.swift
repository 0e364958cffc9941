import ChecklistConformance
import ChecklistTesting
import ChecklistTLS
import ChecklistWire
import Foundation
import Testing

/// The tools over TLS (`checklist`, `checklist-conformance`,
/// `checklist-bench`), against the in-process TLS front for a real
/// `checklistd`: what they do over TLS, and how they refuse a certificate
/// that does not verify.
@Suite(.timeLimit(.minutes(10)))
struct ToolsTLSTests {
    @Test func theCLIWorksOverTLSAndWithMutualTLS() throws {
        let certificates = try TestCertificates.shared()
        let front = try TLSTerminator.start(certificates.serverConfiguration(clientCA: certificates.caFile))
        defer { front.stop() }
        let cli = CLI(server: "localhost:\(front.port)",
                      options: ["--tls-ca", certificates.caFile, "--tls-cert", certificates.client.certificateFile,
                                "--tls-key", certificates.client.privateKeyFile])
        let created = try cli.json("create", "Over TLS")
        #expect(created["name"] as? String == "Over TLS")
        _ = try cli.json("add", "Over TLS", "Milk")
        let shown = try cli.json("show", "Over TLS")
        #expect((shown["items"] as? [[String: Any]])?.map { $0["text"] as? String } == ["Milk"])
        #expect(front.seen.withLock { $0.subjects }.allSatisfy { $0 == certificates.client.subject })
        #expect(front.seen.withLock { $0.subjects }.count == 3)

        // Without the client certificate the server refuses: exit 3, and the message says why.
        let refused = try CLI(server: "localhost:\(front.port)", options: ["--tls-ca", certificates.caFile]).run("lists")
        #expect(refused.status == 3, "\(refused.stderr)")
        #expect(refused.stderr.contains("the server requires a client certificate"), "\(refused.stderr)")
    }

    @Test func theCLIReadsTheTLSVariables() throws {
        let certificates = try TestCertificates.shared()
        let front = try TLSTerminator.start(certificates.serverConfiguration())
        defer { front.stop() }
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CHECKLIST_") }
        environment["CHECKLIST_TLS"] = "1"
        environment["CHECKLIST_TLS_CA"] = certificates.caFile
        let result = try ProcessRunner.run(executable: try ProductLocator.path(of: "checklist"),
                                           arguments: ["--server", "127.0.0.1:\(front.port)", "ping"],
                                           environment: environment, timeout: .seconds(30))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("pong from"), "\(result.stdout)")
        #expect(front.handshakes.wait(timeout: .now() + 10) == .success)
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let name: String
        let identity: @Sendable (TestCertificates) -> TestCertificates.Identity
        let reason: String
        var testDescription: String { name }
    }

    static let refusals = [
        Refusal(name: "unknown CA", identity: { $0.untrustedServer }, reason: "unable to get local issuer certificate"),
        Refusal(name: "expired", identity: { $0.expiredServer }, reason: "certificate has expired"),
        Refusal(name: "wrong name", identity: { $0.otherNameServer }, reason: "IP address mismatch"),
    ]

    @Test(arguments: refusals)
    func theCLIRefusesACertificateThatDoesNotVerify(_ refusal: Refusal) throws {
        let certificates = try TestCertificates.shared()
        let front = try TLSTerminator.start(certificates.serverConfiguration(refusal.identity(certificates)))
        defer { front.stop() }
        let result = try CLI(server: "127.0.0.1:\(front.port)", options: ["--tls-ca", certificates.caFile]).run("lists")
        #expect(result.status == 3, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("checklist: the TLS handshake with 127.0.0.1:\(front.port) failed: "
                                        + "the server's certificate was rejected: \(refusal.reason)"), "\(result.stderr)")
    }

    @Test func badTLSOptionsAreUsageErrors() throws {
        let cli = CLI(server: "127.0.0.1:1")
        let missingCA = try cli.run("--tls-ca", "/nonexistent/ca.pem", "lists")
        #expect(missingCA.status == 2)
        #expect(missingCA.stderr.contains("cannot load the CA certificates from /nonexistent/ca.pem"), "\(missingCA.stderr)")
        let halfIdentity = try cli.run("--tls-cert", "/nonexistent/client.pem", "lists")
        #expect(halfIdentity.status == 2)
        #expect(halfIdentity.stderr.contains("--tls-cert needs --tls-key"), "\(halfIdentity.stderr)")
    }

    @Test func aPlaintextServerIsRefusedNotFallenBackTo() throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let result = try CLI(server: "127.0.0.1:\(server.port)", options: ["--tls"]).run("lists")
        #expect(result.status == 3)
        #expect(result.stderr.contains("does not speak TLS"), "\(result.stderr)")
    }

    // MARK: checklist-conformance

    func conformance(_ arguments: [String]) async throws -> ProcessRunner.Result {
        let executable = try ProductLocator.path(of: "checklist-conformance")
        return try await BlockingWork.run(throttled: true) {
            try ProcessRunner.run(executable: executable, arguments: arguments, timeout: .seconds(400))
        }
    }

    @Test func theWholeCatalogueRunsOverTLS() async throws {
        let certificates = try TestCertificates.shared()
        let front = try TLSTerminator.start(certificates.serverConfiguration())
        defer { front.stop() }
        let result = try await conformance(["localhost:\(front.port)", "--tls-ca", certificates.caFile, "--idle", "0.5"])
        let skipped = Catalogue.all.filter { $0.requirement != .none }.count
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("over TLSv1.3"), "\(result.stdout)")
        #expect(result.stdout.contains("\(Catalogue.all.count - skipped) passed, 0 failed, \(skipped) skipped"), "\(result.stdout)")
        #expect(front.seen.withLock { $0.failures }.isEmpty)
    }

    @Test func conformanceRefusesACertificateThatDoesNotVerify() async throws {
        let certificates = try TestCertificates.shared()
        let front = try TLSTerminator.start(certificates.serverConfiguration(certificates.expiredServer))
        defer { front.stop() }
        let result = try await conformance(["127.0.0.1:\(front.port)", "--tls-ca", certificates.caFile])
        #expect(result.status == 3, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stderr.contains("the TLS handshake with 127.0.0.1:\(front.port) failed: "), "\(result.stderr)")
        #expect(result.stderr.contains("the server's certificate was rejected: certificate has expired"), "\(result.stderr)")
        #expect(!result.stdout.contains("PASS") && !result.stdout.contains("FAIL"))
    }

    /// FrameSocket's TLS mode itself: the handshake, frames both ways, a
    /// half-close (close_notify, then FIN) that still gets its answers.
    @Test func frameSocketSpeaksFramesInsideTLS() throws {
        let certificates = try TestCertificates.shared()
        let front = try TLSTerminator.start(certificates.serverConfiguration())
        defer { front.stop() }
        let context = try TLSContext(client: certificates.clientConfiguration(versions: .tls12 ... .tls12))
        let socket = try FrameSocket(host: "127.0.0.1", port: front.port, timeout: .seconds(10), tls: context)
        defer { socket.close() }
        #expect(socket.tlsVersion == .tls12)
        try socket.handshake(token: nil)
        try socket.sendOneByteAtATime(FrameBytes.request(.ping(Ping(data: [1, 2])), id: 7))
        _ = try socket.receive(7, "PONG") { message -> Bool? in
            if case .pong(let p) = message, p.data == [1, 2] { return true }
            return nil
        }
        try socket.send(FrameBytes.request(.ping(Ping(data: [3])), id: 8))
        try socket.shutdownSending()
        _ = try socket.receive(8, "PONG") { message -> Bool? in
            if case .pong = message { return true }
            return nil
        }
        try socket.expectClosed()
        #expect(front.ends.wait(timeout: .now() + 10) == .success)
        #expect(front.seen.withLock { $0.closeNotifies } == 1)

        // A name the certificate does not carry: refused, the TLS reason kept.
        let otherName = try TLSContext(client: certificates.clientConfiguration(serverName: "other.example"))
        let error = try #require(throws: FrameSocket.Failure.self) {
            _ = try FrameSocket(host: "127.0.0.1", port: front.port, timeout: .seconds(2), tls: otherName)
        }
        #expect(error.code == .tls)
        #expect(error.tls?.code == .certificateRejected, "\(error)")
    }

    // MARK: checklist-bench

    func bench(_ arguments: [String]) async throws -> ProcessRunner.Result {
        let executable = try ProductLocator.path(of: "checklist-bench")
        return try await BlockingWork.run(throttled: true) {
            try ProcessRunner.run(executable: executable, arguments: arguments, timeout: .seconds(120))
        }
    }

    /// The client-library scenarios pass the TLS configuration to every
    /// connection (checked by the front: each handshake presented the
    /// client certificate).
    @Test func benchScenariosRunOverTLS() async throws {
        let certificates = try TestCertificates.shared()
        let front = try TLSTerminator.start(certificates.serverConfiguration(clientCA: certificates.caFile))
        defer { front.stop() }
        let tls = ["--server", "localhost:\(front.port)", "--tls-ca", certificates.caFile,
                   "--tls-cert", certificates.client.certificateFile, "--tls-key", certificates.client.privateKeyFile, "--json"]
        let pages = try benchJSON(try await bench(["pages", "--items", "500", "--connections", "3", "--seconds", "0.5"] + tls))
        #expect(pages["transport"] as? String == "tls")
        #expect((pages["pages"] as? Int ?? 0) > 0, "\(pages)")
        let subjects = front.seen.withLock { $0.subjects }
        #expect(subjects.count >= 4, "the setup connection and 3 measured ones")
        #expect(subjects.allSatisfy { $0 == certificates.client.subject })

        let refused = try await bench(["pages", "--server", "127.0.0.1:\(front.port)", "--tls", "--items", "10"])
        #expect(refused.status == 1)
        // The system's trust store (no --tls-ca) does not know the test CA.
        #expect(refused.stderr.contains("the TLS handshake with 127.0.0.1:\(front.port) failed: the server's certificate was rejected"),
                "\(refused.stderr)")
    }

    /// `load`'s driver (ChecklistIO, TLSSocketStream) over TLS: a session per non-blocking
    /// connection, every answer checked as over plaintext.
    @Test func benchLoadRunsOverTLS() async throws {
        let certificates = try TestCertificates.shared()
        let front = try TLSTerminator.start(certificates.serverConfiguration())
        defer { front.stop() }
        let report = try benchJSON(try await bench([
            "load", "--server", "127.0.0.1:\(front.port)", "--tls-ca", certificates.caFile, "--connections", "4",
            "--seconds", "1", "--lists", "2", "--items", "200", "--pipeline", "4", "--json"]))
        #expect(report["transport"] as? String == "tls")
        #expect(report["connectionsOpen"] as? Int == 4)
        #expect(report["errors"] as? Int == 0, "\(report["errorsByCode"] ?? "")")
        #expect((report["requests"] as? Int ?? 0) > 0)
        #expect(front.seen.withLock { $0.subjects }.count >= 5, "the set-up connection and the 4 load connections")
    }
}
