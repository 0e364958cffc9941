import ChecklistTesting
import ChecklistTLS
import Testing

@Suite("TLS refusals say why", .timeLimit(.minutes(2)))
struct RefusalTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let identity: @Sendable (TestCertificates) -> TestCertificates.Identity
        let reason: String
        var testDescription: String { name }
    }

    static let serverCertificates: [Case] = [
        Case(name: "unknown CA", identity: { $0.untrustedServer }, reason: "unable to get local issuer certificate"),
        Case(name: "expired", identity: { $0.expiredServer }, reason: "certificate has expired"),
        Case(name: "wrong name", identity: { $0.otherNameServer }, reason: "hostname mismatch"),
    ]

    @Test("a client refuses a server certificate that does not verify", arguments: serverCertificates,
          [TLSVersion.tls13, .tls12])
    func clientRefuses(_ refusal: Case, version: TLSVersion) throws {
        let certificates = try TestCertificates.shared()
        let pair = try SessionPair(client: certificates.clientConfiguration(versions: version ... version),
                                   server: certificates.serverConfiguration(refusal.identity(certificates)))
        #expect(!pair.handshake())
        let failure = try #require(pair.client.failure)
        #expect(failure.code == .certificateRejected)
        #expect(failure.verificationFailure == refusal.reason)
        #expect(failure.message.contains("the server's certificate was rejected: \(refusal.reason)"), "\(failure)")
        // The client's alert reached the server, which says the peer refused its certificate.
        #expect(pair.server.failure?.code == .certificateRejected, "\(String(describing: pair.server.failure))")
        #expect(!pair.server.isHandshakeComplete)
    }

    @Test("a server requiring client certificates refuses a client without one", arguments: [TLSVersion.tls13, .tls12])
    func clientWithoutCertificate(version: TLSVersion) throws {
        let certificates = try TestCertificates.shared()
        let pair = try SessionPair(client: certificates.clientConfiguration(versions: version ... version),
                                   server: certificates.serverConfiguration(clientCA: certificates.caFile))
        #expect(!pair.handshake())
        let failure = try #require(pair.server.failure)
        #expect(failure.code == .certificateRejected)
        #expect(failure.message.contains("the client sent no certificate"), "\(failure)")
        #expect(pair.server.peerCertificateSubject == nil)
        // TLS 1.3: the client finished its side first and hears of it on its next read.
        if pair.client.failure == nil { _ = try? pair.readAll(pair.client) }
        #expect(pair.client.failure?.code == .certificateRejected, "\(String(describing: pair.client.failure))")
        #expect(pair.client.failure?.message.contains("the server requires a client certificate, and none is configured") == true)
    }

    @Test("a server refuses a client certificate from an unknown CA", arguments: [TLSVersion.tls13, .tls12])
    func clientFromUnknownCA(version: TLSVersion) throws {
        let certificates = try TestCertificates.shared()
        let pair = try SessionPair(client: certificates.clientConfiguration(certificates.untrustedClient,
                                                                            versions: version ... version),
                                   server: certificates.serverConfiguration(clientCA: certificates.caFile))
        #expect(!pair.handshake())
        let failure = try #require(pair.server.failure)
        #expect(failure.code == .certificateRejected)
        #expect(failure.message.contains("the client's certificate was rejected"), "\(failure)")
        #expect(failure.verificationFailure == "unable to get local issuer certificate" ||
                failure.verificationFailure == "unable to verify the first certificate", "\(failure)")
        #expect(pair.server.peerCertificateSubject == nil)
        if pair.client.failure == nil { _ = try? pair.readAll(pair.client) }
        #expect(pair.client.failure?.code == .certificateRejected, "\(String(describing: pair.client.failure))")
        #expect(pair.client.failure?.message.contains("the peer refused our certificate") == true)
    }
}
