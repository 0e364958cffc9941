import ChecklistTesting
import ChecklistTLS
import Foundation
import Testing

@Suite("TLS contexts from files", .timeLimit(.minutes(2)))
struct ContextTests {
    @Test("bad files are refused with the file's name and OpenSSL's reason")
    func badFiles() throws {
        let certificates = try TestCertificates.shared()
        let missing = certificates.directory.appending("missing.pem")
        let cases: [(TLSServerConfiguration, String)] = [
            (TLSServerConfiguration(certificateFile: missing, privateKeyFile: certificates.server.privateKeyFile),
             "cannot load the certificate chain from \(missing)"),
            (TLSServerConfiguration(certificateFile: certificates.server.certificateFile, privateKeyFile: missing),
             "cannot load the private key from \(missing)"),
            (TLSServerConfiguration(certificateFile: certificates.server.certificateFile,
                                    privateKeyFile: certificates.client.privateKeyFile),
             "cannot load the private key from \(certificates.client.privateKeyFile)"),
            (certificates.serverConfiguration(clientCA: missing), "cannot load the client CA certificates from \(missing)"),
        ]
        for (configuration, expected) in cases {
            let error = try #require(throws: TLSError.self) { try TLSContext(server: configuration) }
            #expect(error.code == .configuration)
            #expect(error.message.contains(expected), "\(error)")
            #expect(error.message.count > expected.count + 10, "OpenSSL's reason is attached: \(error)")
        }
        let halfIdentity = TLSClientConfiguration(caFile: certificates.caFile, certificateFile: certificates.client.certificateFile)
        let error = try #require(throws: TLSError.self) { try TLSContext(client: halfIdentity) }
        #expect(error.code == .configuration)
    }

    @Test("the system trust store loads by default, and does not trust the test CA")
    func systemTrustStore() throws {
        let certificates = try TestCertificates.shared()
        let pair = try SessionPair(client: TLSContext(client: TLSClientConfiguration()),
                                   server: TLSContext(server: certificates.serverConfiguration()))
        #expect(!pair.handshake())
        let client = pair.client
        #expect(client.failure?.code == .certificateRejected)
        #expect(client.failure?.verificationFailure == "unable to get local issuer certificate")
    }

    @Test("a reload from bad files keeps the old context; a good one replaces it")
    func reload() throws {
        let certificates = try TestCertificates.shared()
        let files = try TemporaryDirectory(prefix: "checklists-tls-reload")
        let certificate = files.appending("server.pem"), key = files.appending("server.key")
        try FileManager.default.copyItem(atPath: certificates.server.certificateFile, toPath: certificate)
        try FileManager.default.copyItem(atPath: certificates.server.privateKeyFile, toPath: key)
        let reloadable = try ReloadableTLSContext(TLSServerConfiguration(certificateFile: certificate, privateKeyFile: key))
        let first = reloadable.current

        try Data("not a certificate".utf8).write(to: URL(fileURLWithPath: certificate))
        let error = try #require(throws: TLSError.self) { try reloadable.reload() }
        #expect(error.code == .configuration)
        #expect(error.message.contains(certificate), "\(error)")
        #expect(reloadable.current === first)
        // The kept context still serves handshakes.
        let client = try TLSContext(client: certificates.clientConfiguration())
        let kept = try SessionPair(client: client, server: reloadable.current)
        #expect(kept.handshake(), "\(String(describing: kept.clientError))")
        // A session made now, before the next reload, keeps this context.
        let open = try SessionPair(client: client, server: reloadable.current)

        // A certificate for another name, with its key: the reload takes it.
        try FileManager.default.removeItem(atPath: certificate)
        try FileManager.default.removeItem(atPath: key)
        try FileManager.default.copyItem(atPath: certificates.otherNameServer.certificateFile, toPath: certificate)
        try FileManager.default.copyItem(atPath: certificates.otherNameServer.privateKeyFile, toPath: key)
        try reloadable.reload()
        #expect(reloadable.current !== first)
        let renewed = try SessionPair(client: TLSContext(client: certificates.clientConfiguration(serverName: "other.example")),
                                      server: reloadable.current)
        #expect(renewed.handshake(), "\(String(describing: renewed.clientError))")
        #expect(open.handshake(), "the session made before the reload keeps the old certificate")
        #expect(open.client.peerCertificateSubject == certificates.server.subject)
    }
}
