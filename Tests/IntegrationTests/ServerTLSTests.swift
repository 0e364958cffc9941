import ChecklistClient
import ChecklistModel
import ChecklistTesting
import ChecklistTLS
import Foundation
import Testing

/// `checklistd --tls-cert/--tls-key`: the server's own TLS, through the
/// client library (and `openssl s_client`, a peer this project did not
/// write), with certificates made at test time.
@Suite(.timeLimit(.minutes(3)))
struct ServerTLSTests {
    @Test(arguments: [TLSVersion.tls13, .tls12])
    func fullScenarioOverTheServersTLS(version: TLSVersion) async throws {
        let server = try NativeTLSServer.start()
        defer { server.stop() }
        let client = try await server.connect(server.certificates.clientConfiguration(versions: version ... version))
        #expect(client.tlsVersion == version)
        #expect(client.tlsServerSubject == server.certificates.server.subject)
        try await TLSScenario.run(client, name: "Over \(version)")
        let stats = try await client.stats()
        #expect(stats.tls?.handshakes == 1)
        await client.close()
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let name: String
        let identity: @Sendable (TestCertificates) -> TestCertificates.Identity
        let reason: String
        var testDescription: String { name }
    }

    /// The client refuses a server certificate that does not verify; the
    /// server logs the failed handshake (the client's alert) and counts it.
    @Test(arguments: [
        Refusal(name: "unknown CA", identity: { $0.untrustedServer }, reason: "unable to get local issuer certificate"),
        Refusal(name: "expired", identity: { $0.expiredServer }, reason: "certificate has expired"),
        Refusal(name: "wrong name", identity: { $0.otherNameServer }, reason: "IP address mismatch"),
    ])
    func clientRefusesTheServersCertificate(_ refusal: Refusal) async throws {
        let certificates = try TestCertificates.shared()
        let server = try NativeTLSServer.start(refusal.identity(certificates))
        defer { server.stop() }
        let error = try await #require(throws: ClientError.self) { _ = try await server.connect() }
        #expect(error.code == .certificateRejected)
        #expect(error.message.contains("the server's certificate was rejected: \(refusal.reason)"), "\(error)")
        #expect(server.process.waitForStandardError(containing: "event=tls_failed"))
        #expect(server.process.standardError.contains("reason=handshake_failed"), "\(server.process.standardError)")
        #expect(server.process.exitStatus == nil)
    }

    /// `--tls-client-ca`: a client without a certificate, or with one from
    /// another CA, is refused in the handshake; one with a good certificate is served.
    @Test func mutualTLSRequiresAClientCertificate() async throws {
        let certificates = try TestCertificates.shared()
        let server = try NativeTLSServer.start(nil, ["--tls-client-ca", certificates.caFile])
        defer { server.stop() }

        let missing = try await #require(throws: ClientError.self) { _ = try await server.connect() }
        #expect(missing.code == .certificateRejected, "\(missing)")
        #expect(missing.message.contains("the server requires a client certificate"), "\(missing)")
        let untrusted = try await #require(throws: ClientError.self) {
            _ = try await server.connect(certificates.clientConfiguration(certificates.untrustedClient))
        }
        #expect(untrusted.code == .certificateRejected || untrusted.code == .tlsFailed, "\(untrusted)")
        #expect(server.process.waitForStandardError(containing: "reason=handshake_failed"))

        let client = try await server.connect(certificates.clientConfiguration(certificates.client))
        _ = try await client.createList(name: "mutual", icon: "Inbox")
        #expect(try await client.lists().map(\.name) == ["mutual"])
        let stats = try await client.stats()
        #expect((stats.tls?.handshakeFailures ?? 0) >= 2)
        await client.close()
    }

    /// With `--tokens`, a `cert:SUBJECT NAMESPACE` line lets a client
    /// certificate stand in for a token: a HELLO without a token opens the
    /// namespace of the certificate's subject; a token, when given, still wins.
    @Test func clientCertificateSubjectOpensItsNamespace() async throws {
        let certificates = try TestCertificates.shared()
        let tokens = try TemporaryDirectory(prefix: "checklistd-tls-tokens")
        let bob = "bob-2e4f6a8c0d1b3e5f7a9c0e1f"
        try TokenServer.write("""
            cert:\(certificates.client.subject)  alice   # the client certificate CN=alice
            \(bob) bob

            """, to: tokens.appending("tokens"))
        let server = try NativeTLSServer.start(nil, ["--tls-client-ca", certificates.caFile,
                                                     "--tokens", tokens.appending("tokens")])
        defer { server.stop() }
        let alice = try await server.connect(certificates.clientConfiguration(certificates.client))
        _ = try await alice.createList(name: "alice's", icon: "Inbox")
        let asBob = try await server.connect(certificates.clientConfiguration(certificates.client), token: bob)
        #expect(try await asBob.lists().isEmpty, "the token wins over the certificate: bob's namespace")
        _ = try await asBob.createList(name: "bob's", icon: "Inbox")
        #expect(try await alice.lists().map(\.name) == ["alice's"])
        await asBob.close()

        // Without the cert: line, the same certificate opens nothing.
        try TokenServer.write("\(bob) bob\n", to: tokens.appending("tokens"))
        let offset = server.process.standardErrorCount
        server.process.send(signal: SIGHUP)
        #expect(server.process.waitForStandardError(containing: "reloaded 1 tokens", after: offset))
        let refused = try await #require(throws: ClientError.self) {
            _ = try await server.connect(certificates.clientConfiguration(certificates.client))
        }
        #expect(refused.message.contains("opens no namespace"), "\(refused)")
        await alice.close()
    }

    /// `openssl s_client` completes a handshake with the server and verifies it.
    @Test func openSSLClientVerifiesTheServer() async throws {
        let certificates = try TestCertificates.shared()
        let server = try NativeTLSServer.start(nil, ["--tls-client-ca", certificates.caFile])
        defer { server.stop() }
        let port = server.port
        let result = try await BlockingWork.run {
            try ProcessRunner.run(executable: "/bin/sh", arguments: ["-c", """
                exec openssl s_client -connect 127.0.0.1:\(port) -servername localhost -verify_return_error \
                -CAfile '\(certificates.caFile)' -cert '\(certificates.client.certificateFile)' \
                -key '\(certificates.client.privateKeyFile)' </dev/null 2>&1
                """], timeout: .seconds(30))
        }
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.contains("Verify return code: 0 (ok)"), "\(result.stdout)")
        #expect(result.stdout.contains("TLSv1.3"), "\(result.stdout)")
    }

    /// SIGHUP reloads the certificate and key: open connections keep theirs
    /// and go on working, new ones get the new pair; a pair that does not
    /// load keeps the one in use, and the log says why.
    @Test func reloadUnderOpenConnections() async throws {
        let certificates = try TestCertificates.shared()
        let server = try NativeTLSServer.start()
        defer { server.stop() }
        let before = try await server.connect()
        let list = try await before.createList(name: "kept", icon: "Inbox")
        #expect(before.tlsServerSubject == certificates.server.subject)

        try server.install(certificates.otherNameServer)
        var offset = server.process.standardErrorCount
        server.process.send(signal: SIGHUP)
        #expect(server.process.waitForStandardError(containing: "reloaded the TLS certificate", after: offset))
        let after = try await server.connect(certificates.clientConfiguration(serverName: "other.example"))
        #expect(after.tlsServerSubject == certificates.otherNameServer.subject)
        #expect(try await before.lists().map(\.id) == [list.id], "the open connection keeps working")
        _ = try await before.patch(list.id, ops: [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "still here"))])

        try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: server.certificateFile))
        offset = server.process.standardErrorCount
        server.process.send(signal: SIGHUP)
        #expect(server.process.waitForStandardError(containing: "cannot reload the TLS certificate and key", after: offset))
        #expect(server.process.standardError.contains("keeping the pair in use"))
        let still = try await server.connect(certificates.clientConfiguration(serverName: "other.example"))
        #expect(still.tlsServerSubject == certificates.otherNameServer.subject)
        #expect(try await after.page(list.id, limit: 10).items.map(\.text) == ["still here"])
        for client in [before, after, still] { await client.close() }
    }
}
