@testable import ChecklistClient
import ChecklistSocket
import ChecklistTesting
import ChecklistTLS
import Dispatch
import Testing

/// The client library's TLS: against an in-process TLS front for the real
/// `checklistd` (full scenario, mutual TLS), and against `openssl s_server`
/// (a peer this project did not write) for interoperability and refusals.
@Suite(.timeLimit(.minutes(3)))
struct ClientTLSTests {
    @Test func fullScenarioOverTLS() async throws {
        let certificates = try TestCertificates.shared()
        let front = try TLSTerminator.start(certificates.serverConfiguration())
        defer { front.stop() }

        for version in [TLSVersion.tls13, .tls12] {
            let client = try await ChecklistConnection.connect(
                host: "127.0.0.1", port: front.port, clientName: "tls-test",
                tls: TLSClientConfiguration(caFile: certificates.caFile, versions: version ... version))
            #expect(client.tlsVersion == version)
            #expect(client.tlsServerSubject == certificates.server.subject)
            try await TLSScenario.run(client, name: "Over \(version)")
            await client.close()
            #expect(front.ends.wait(timeout: .now() + 10) == .success)
        }
        #expect(front.seen.withLock { $0.subjects } == [nil, nil])
        #expect(front.seen.withLock { $0.closeNotifies } == 2, "close() sends close_notify")
        #expect(front.seen.withLock { $0.failures }.isEmpty)
    }

    @Test func mutualTLSSendsTheClientCertificate() async throws {
        let certificates = try TestCertificates.shared()
        let front = try TLSTerminator.start(certificates.serverConfiguration(clientCA: certificates.caFile))
        defer { front.stop() }

        let client = try await ChecklistConnection.connect(
            host: "localhost", port: front.port, clientName: "tls-test",
            tls: certificates.clientConfiguration(certificates.client))
        _ = try await client.lists()
        await client.close()
        #expect(front.seen.withLock { $0.subjects } == ["CN=alice,O=Checklists Test"])

        // Without a certificate: refused, and the message says what is missing.
        let error = try await #require(throws: ClientError.self) {
            _ = try await ChecklistConnection.connect(host: "127.0.0.1", port: front.port, clientName: "tls-test",
                                                      tls: certificates.clientConfiguration())
        }
        #expect(error.code == .certificateRejected)
        #expect(error.message.contains("the server requires a client certificate"), "\(error)")
    }

    @Test func plaintextServerIsRefusedNotFallenBackTo() async throws {
        let certificates = try TestCertificates.shared()
        let server = try TestServer.start()
        defer { server.stop() }
        let error = try await #require(throws: ClientError.self) {
            _ = try await ChecklistConnection.connect(host: "127.0.0.1", port: server.port, clientName: "tls-test",
                                                      tls: certificates.clientConfiguration())
        }
        #expect(error.code == .tlsFailed)
        #expect(error.message.contains("does not speak TLS"), "\(error)")
        // The server saw no HELLO: the connection never spoke plaintext frames.
        #expect(!server.process.standardError.contains("tls-test"))
    }

    @Test func silentServerTimesOutTheHandshake() async throws {
        let certificates = try TestCertificates.shared()
        // The kernel completes the TCP handshake (backlog); nothing ever answers.
        let (listener, port) = try makeListeningSocket(host: "127.0.0.1", port: 0)
        defer { closeSocket(listener) }
        let error = try await #require(throws: ClientError.self) {
            _ = try await ChecklistConnection.connect(host: "127.0.0.1", port: port, clientName: "tls-test",
                                                      timeout: .milliseconds(500), tls: certificates.clientConfiguration())
        }
        #expect(error.code == .timeout)
        #expect(error.message.contains("the TLS handshake with 127.0.0.1:\(port)"), "\(error)")
    }

    @Test(arguments: [TLSVersion.tls13, .tls12])
    func interoperatesWithOpenSSLServer(version: TLSVersion) async throws {
        let certificates = try TestCertificates.shared()
        let server = try OpenSSLServer(identity: certificates.server)
        defer { server.stop() }
        // s_server -rev sends each line back reversed: the connection's TLS
        // layer, with a peer this project did not write.
        let (reply, negotiated) = try await BlockingWork.run { () throws -> (String, TLSVersion?) in
            let deadline = ContinuousClock.now + .seconds(20)
            // The client's connect and handshake, then its frame stream's
            // steps with waits, as a blocking user takes them.
            let stream = try FrameStream.connect(host: "127.0.0.1", port: server.port,
                                                 tls: certificates.clientConfiguration(versions: version ... version),
                                                 deadline: deadline)
            defer { stream.close() }
            try stream.enqueue(Array("hello-there\n".utf8))
            while try !stream.flush().isDone { try stream.wait(.writable, deadline: deadline, what: "write") }
            let tls = try #require(stream.tls)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
            let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: TLSSocketStream.recordBytes, alignment: 16)
            defer { buffer.deallocate(); scratch.deallocate() }
            var received: [UInt8] = []
            reading: while !received.contains(UInt8(ascii: "\n")) {
                switch try tls.read(into: buffer, scratch: scratch) {
                case .bytes(let n): received += buffer[..<n]
                case .wouldBlock: try stream.wait(.readable, deadline: deadline, what: "read")
                case .endOfFile: break reading
                }
            }
            return (String(decoding: received, as: UTF8.self), tls.session.protocolVersion)
        }
        #expect(reply == "ereht-olleh\n")
        #expect(negotiated == version)
        #expect(server.command.waitForStandardError(containing: "Protocol version: \(version)"))
    }

    /// The other direction: `openssl s_client` against ChecklistTLS's
    /// server session (in the TLS front), with a client certificate.
    @Test func openSSLClientCompletesTheServerSessionsHandshake() async throws {
        let certificates = try TestCertificates.shared()
        let front = try TLSTerminator.start(certificates.serverConfiguration(clientCA: certificates.caFile))
        defer { front.stop() }
        let result = try await BlockingWork.run {
            try ProcessRunner.run(executable: "/bin/sh", arguments: ["-c", """
                exec openssl s_client -connect 127.0.0.1:\(front.port) -servername localhost -verify_return_error \
                -CAfile '\(certificates.caFile)' -cert '\(certificates.client.certificateFile)' \
                -key '\(certificates.client.privateKeyFile)' 2>&1
                """], timeout: .seconds(30))
        }
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.contains("Verify return code: 0 (ok)"), "\(result.stdout)")
        #expect(result.stdout.contains("TLSv1.3"), "\(result.stdout)")
        // s_client ends after the handshake (its stdin is empty); the front saw the certificate.
        #expect(front.handshakes.wait(timeout: .now() + 10) == .success)
        #expect(front.seen.withLock { $0.subjects } == ["CN=alice,O=Checklists Test"])
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let name: String
        let identity: @Sendable (TestCertificates) -> TestCertificates.Identity
        let reason: String
        var testDescription: String { name }
    }

    @Test(arguments: [
        Refusal(name: "unknown CA", identity: { $0.untrustedServer }, reason: "unable to get local issuer certificate"),
        Refusal(name: "expired", identity: { $0.expiredServer }, reason: "certificate has expired"),
        Refusal(name: "wrong name", identity: { $0.otherNameServer }, reason: "IP address mismatch"),
    ])
    func refusesServerCertificate(_ refusal: Refusal) async throws {
        let certificates = try TestCertificates.shared()
        let server = try OpenSSLServer(identity: refusal.identity(certificates))
        defer { server.stop() }
        let error = try await #require(throws: ClientError.self) {
            _ = try await ChecklistConnection.connect(host: "127.0.0.1", port: server.port, clientName: "tls-test",
                                                      tls: certificates.clientConfiguration())
        }
        #expect(error.code == .certificateRejected)
        #expect(error.message.contains("the TLS handshake with 127.0.0.1:\(server.port) failed"), "\(error)")
        #expect(error.message.contains("the server's certificate was rejected: \(refusal.reason)"), "\(error)")
    }

    @Test func systemTrustStoreIsTheDefault() async throws {
        let certificates = try TestCertificates.shared()
        let server = try OpenSSLServer(identity: certificates.server)
        defer { server.stop() }
        let error = try await #require(throws: ClientError.self) {
            _ = try await ChecklistConnection.connect(host: "localhost", port: server.port, clientName: "tls-test",
                                                      tls: TLSClientConfiguration())
        }
        #expect(error.code == .certificateRejected)
        #expect(error.message.contains("unable to get local issuer certificate"), "\(error)")
    }
}

/// `openssl s_server -rev` on 127.0.0.1 for one connection, started for a test.
struct OpenSSLServer: Sendable {
    let command: RunningCommand
    let port: UInt16

    init(identity: TestCertificates.Identity) throws {
        // A free port: bound, read and released, then given to s_server.
        let (probe, port) = try makeListeningSocket(host: "127.0.0.1", port: 0)
        closeSocket(probe)
        self.port = port
        // s_server reports on stdout; the shell sends it to stderr, where
        // RunningCommand can wait for its readiness line. -rev (echo each
        // line reversed) never reads stdin, whose end would end the connection.
        command = try RunningCommand(executable: "/bin/sh", arguments: ["-c", """
            exec openssl s_server -accept 127.0.0.1:\(port) -cert '\(identity.certificateFile)' \
            -key '\(identity.privateKeyFile)' -naccept 1 -rev 1>&2
            """])
        guard command.waitForStandardError(containing: "ACCEPT") else {
            _ = try? command.finish(timeout: .seconds(1))
            throw ChildProcessError("openssl s_server did not start on port \(port)")
        }
    }

    /// Waits briefly for it to end after its one connection; kills it otherwise.
    func stop() {
        _ = try? command.finish(timeout: .seconds(5))
    }
}
