import ChecklistTesting
import ChecklistTLS
import Testing

@Suite("TLS sessions facing bad input", .timeLimit(.minutes(2)))
struct HostileInputTests {
    private func serverSession(limits: TLSSession.Limits = TLSSession.Limits()) throws -> TLSSession {
        let certificates = try TestCertificates.shared()
        return try TLSSession(server: TLSContext(server: certificates.serverConfiguration()), limits: limits)
    }

    private func feed(_ bytes: [UInt8], to session: TLSSession) throws -> Int {
        try bytes.withUnsafeBytes { try session.feed($0) }
    }

    @Test("plaintext on a TLS server session is recognised by its first byte", arguments: [
        [0, 0, 0, 12, 1, 0, 0, 0, 0, 0, 0, 1] as [UInt8],  // a protocol frame's length prefix
        Array("GET / HTTP/1.1\r\n".utf8),
    ])
    func plaintext(_ bytes: [UInt8]) throws {
        let session = try serverSession()
        #expect(throws: TLSError.self) { try feed(bytes, to: session) }
        #expect(session.failure?.code == .notTLS)
        #expect(session.failure?.message.contains("not a TLS handshake record") == true)
        // Sticky: every later call says the same.
        #expect(throws: TLSError.self) { try session.handshake() }
        #expect(session.failure?.code == .notTLS)
        #expect(session.pendingOutput == 0)
    }

    @Test("a garbage handshake record fails the handshake with an alert for the peer")
    func garbageHandshake() throws {
        let session = try serverSession()
        var garbage: [UInt8] = [0x16, 0x03, 0x01, 0x00, 0x40]
        garbage += (0..<0x40).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 13) }
        #expect(try feed(garbage, to: session) == garbage.count)
        #expect(throws: TLSError.self) { try session.handshake() }
        #expect(session.failure?.code == .handshakeFailed)
        #expect(session.pendingOutput > 0, "a fatal alert waits to be sent")
    }

    @Test("a garbage record after the handshake is a protocol violation")
    func garbageAfterHandshake() throws {
        let certificates = try TestCertificates.shared()
        let pair = try SessionPair(client: certificates.clientConfiguration(), server: certificates.serverConfiguration())
        #expect(pair.handshake())
        var record: [UInt8] = [0x17, 0x03, 0x03, 0x00, 0x30]
        record += [UInt8](repeating: 0xA5, count: 0x30)
        #expect(try feed(record, to: pair.server) == record.count)
        var buffer = [UInt8](repeating: 0, count: 256)
        #expect(throws: TLSError.self) { try buffer.withUnsafeMutableBytes { try pair.server.readPlaintext(into: $0) } }
        #expect(pair.server.failure?.code == .protocolViolation, "\(String(describing: pair.server.failure))")
    }

    @Test("a truncated handshake waits for input, then ends as truncated")
    func truncatedHandshake() throws {
        let certificates = try TestCertificates.shared()
        let client = try TLSSession(client: TLSContext(client: certificates.clientConfiguration()), serverName: "localhost")
        #expect(try client.handshake() == .wantsInput)
        var hello = [UInt8](repeating: 0, count: client.pendingOutput)
        #expect(hello.withUnsafeMutableBytes { client.takeOutput(into: $0) } == hello.count)
        #expect(hello.first == TLSSession.handshakeRecordType)

        let server = try serverSession()
        #expect(try feed(Array(hello.prefix(hello.count / 2)), to: server) == hello.count / 2)
        #expect(try server.handshake() == .wantsInput)
        #expect(server.pendingOutput == 0)
        server.endOfInput()
        #expect(throws: TLSError.self) { try server.handshake() }
        #expect(server.failure?.code == .truncated, "\(String(describing: server.failure))")
    }

    @Test("every one-byte corruption of a real ClientHello ends in a clean answer")
    func corruptedClientHellos() throws {
        let certificates = try TestCertificates.shared()
        let client = try TLSSession(client: TLSContext(client: certificates.clientConfiguration()), serverName: "localhost")
        _ = try client.handshake()
        var hello = [UInt8](repeating: 0, count: client.pendingOutput)
        _ = hello.withUnsafeMutableBytes { client.takeOutput(into: $0) }
        let context = try TLSContext(server: certificates.serverConfiguration())
        var outcomes: [String: Int] = [:]
        for index in hello.indices {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var corrupt = hello
                corrupt[index] ^= flip
                let server = try TLSSession(server: context)
                let outcome: String
                do {
                    _ = try feed(corrupt, to: server)
                    outcome = "\(try server.handshake())"
                } catch let error as TLSError {
                    outcome = error.code.description
                }
                // Whatever happened, the session holds no more than its limits.
                #expect(server.pendingOutput <= server.limits.maxBufferedOutput)
                #expect(server.inputSpace <= server.limits.maxBufferedInput)
                if index == 0 { #expect(outcome == "notTLS") }
                outcomes[outcome, default: 0] += 1
            }
        }
        // A corrupt first byte (or record version) is "not TLS"; other
        // corruptions fail the handshake, or leave the server waiting for
        // the client's next flight (an ignored byte, e.g. in the random, or
        // a longer announced length). The handshake never completes.
        #expect(outcomes["handshakeFailed", default: 0] > 0)
        #expect(outcomes["wantsInput", default: 0] > 0)
        #expect(Set(outcomes.keys).isSubset(of: ["notTLS", "handshakeFailed", "wantsInput"]), "\(outcomes)")
    }

    @Test("fed ciphertext is bounded: feed takes only what fits")
    func boundedInput() throws {
        let session = try serverSession(limits: TLSSession.Limits(maxBufferedInput: 1000, maxBufferedOutput: 1000))
        // A record header announcing 16 KiB, then its start: never a whole record.
        var bytes: [UInt8] = [0x16, 0x03, 0x01, 0x40, 0x00]
        bytes += [UInt8](repeating: 1, count: 3000)
        #expect(try feed(bytes, to: session) == 1000)
        #expect(session.inputSpace == 0)
        #expect(try feed(bytes, to: session) == 0)
        _ = try? session.handshake()
        // Whatever the session did with the bytes, it holds no more than its limit.
        #expect(session.inputSpace <= 1000)
    }

    @Test("written plaintext is bounded: writePlaintext takes only what fits")
    func boundedOutput() throws {
        let certificates = try TestCertificates.shared()
        let limits = TLSSession.Limits(maxBufferedInput: 4096, maxBufferedOutput: 4096)
        let pair = try SessionPair(client: certificates.clientConfiguration(), server: certificates.serverConfiguration(),
                                   limits: limits)
        #expect(pair.handshake())
        let big = [UInt8](repeating: 7, count: 100_000)
        let taken = try big.withUnsafeBytes { try pair.server.writePlaintext($0) }
        #expect(taken > 0 && taken <= 4096)
        #expect(try big.withUnsafeBytes { try pair.server.writePlaintext($0) } == 0)
        #expect(pair.server.pendingOutput <= 4096 + 256)
        // Through the bounded buffers, everything still arrives: the part
        // already taken, then the whole again.
        let received = try pair.transfer(big, from: pair.server, to: pair.client)
        #expect(received.count == taken + big.count)
        #expect(received.allSatisfy { $0 == 7 })
    }
}
