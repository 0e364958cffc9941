import ChecklistTesting
import ChecklistTLS
import Testing

@Suite("TLS sessions over memory buffers", .timeLimit(.minutes(2)))
struct HandshakeTests {
    @Test("TLS 1.3 and 1.2 handshakes complete and carry data both ways", arguments: [TLSVersion.tls13, .tls12])
    func handshakeAndData(version: TLSVersion) throws {
        let certificates = try TestCertificates.shared()
        let pair = try SessionPair(client: certificates.clientConfiguration(versions: version ... version),
                                   server: certificates.serverConfiguration())
        #expect(pair.handshake(), "client: \(String(describing: pair.clientError)), server: \(String(describing: pair.serverError))")
        #expect(pair.client.protocolVersion == version)
        #expect(pair.server.protocolVersion == version)
        // No client certificate was asked for.
        #expect(pair.server.peerCertificateSubject == nil)
        #expect(pair.client.peerCertificateSubject == certificates.server.subject)

        let request = Array("HELLO from the client".utf8)
        #expect(try pair.transfer(request, from: pair.client, to: pair.server) == request)
        let answer = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        #expect(try pair.transfer(answer, from: pair.server, to: pair.client) == answer)
    }

    @Test("a server refuses TLS older than 1.2, and 1.3-only meets 1.2-only with a clear failure")
    func versionsMustOverlap() throws {
        let certificates = try TestCertificates.shared()
        let pair = try SessionPair(client: certificates.clientConfiguration(versions: .tls12 ... .tls12),
                                   server: certificates.serverConfiguration(versions: .tls13 ... .tls13))
        #expect(!pair.handshake())
        #expect(pair.server.failure?.code == .handshakeFailed)
        #expect(pair.server.failure?.message.contains("unsupported protocol") == true, "\(String(describing: pair.server.failure))")
        #expect(pair.client.failure?.code == .handshakeFailed)
    }

    @Test("an IP address is verified against the certificate's IP SAN")
    func ipAddressNames() throws {
        let certificates = try TestCertificates.shared()
        let good = try SessionPair(client: certificates.clientConfiguration(), server: certificates.serverConfiguration(),
                                   serverName: "127.0.0.1")
        #expect(good.handshake(), "\(String(describing: good.clientError))")

        let wrong = try SessionPair(client: certificates.clientConfiguration(), server: certificates.serverConfiguration(),
                                    serverName: "127.0.0.2")
        #expect(!wrong.handshake())
        #expect(wrong.client.failure?.code == .certificateRejected)
        #expect(wrong.client.failure?.verificationFailure == "IP address mismatch")
    }

    @Test("a configured server name replaces the host name")
    func serverNameOverride() throws {
        let certificates = try TestCertificates.shared()
        let pair = try SessionPair(client: certificates.clientConfiguration(serverName: "other.example"),
                                   server: certificates.serverConfiguration(certificates.otherNameServer),
                                   serverName: "127.0.0.1")
        #expect(pair.handshake(), "\(String(describing: pair.clientError))")
        #expect(pair.client.serverName == "other.example")
    }

    @Test("close_notify ends the stream cleanly; an end without it is truncation")
    func closeNotify() throws {
        let certificates = try TestCertificates.shared()
        let pair = try SessionPair(client: certificates.clientConfiguration(), server: certificates.serverConfiguration())
        #expect(pair.handshake())
        pair.client.close()
        #expect(try pair.transfer([], from: pair.client, to: pair.server).isEmpty)
        var buffer = [UInt8](repeating: 0, count: 64)
        #expect(try buffer.withUnsafeMutableBytes { try pair.server.readPlaintext(into: $0) } == .closed)
        #expect(pair.server.closeReceived)

        // The other direction: the server's stream just ends.
        pair.client.endOfInput()
        #expect(throws: TLSError.self) { try buffer.withUnsafeMutableBytes { try pair.client.readPlaintext(into: $0) } }
        #expect(pair.client.failure?.code == .truncated)
    }

    @Test("mutual TLS: the server sees the client certificate's subject")
    func mutualTLS() throws {
        let certificates = try TestCertificates.shared()
        for version in [TLSVersion.tls13, .tls12] {
            let pair = try SessionPair(client: certificates.clientConfiguration(certificates.client, versions: version ... version),
                                       server: certificates.serverConfiguration(clientCA: certificates.caFile))
            #expect(pair.handshake(), "\(version): \(String(describing: pair.serverError))")
            #expect(pair.server.peerCertificateSubject == "CN=alice,O=Checklists Test")
            #expect(certificates.client.subject == "CN=alice,O=Checklists Test")
            let bytes = Array("over mutual TLS".utf8)
            #expect(try pair.transfer(bytes, from: pair.client, to: pair.server) == bytes)
        }
    }
}
