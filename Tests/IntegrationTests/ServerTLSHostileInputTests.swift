import ChecklistClient
import ChecklistConformance
import ChecklistModel
import ChecklistRandom
import ChecklistTesting
import ChecklistTLS
import ChecklistWire
import Foundation
import Testing

/// Hostile input on the server's TLS port (and TLS on its plaintext port):
/// each gets a close, an `event=tls_failed` (or `tls_on_plain_port`) line
/// and a STATS counter, and a client connected all along goes on working.
@Suite(.timeLimit(.minutes(3)))
struct ServerTLSHostileInputTests {
    /// The start of a TLS 1.2 ClientHello record: type 0x16, version 0x0301, length 0x00C8.
    static let recordHeader: [UInt8] = [0x16, 0x03, 0x01, 0x00, 0xC8]

    struct Hostile: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        /// Stop sending (shut down our side) after the bytes.
        let thenShutDown: Bool
        let reason: String
        var testDescription: String { name }
    }

    @Test(arguments: [
        Hostile(name: "plaintext HELLO", bytes: FrameBytes.request(.hello(Hello(features: [], clientName: "plain")), id: 1), thenShutDown: false, reason: "not_tls"),
        Hostile(name: "garbage record", bytes: [0x16, 0x03, 0x01, 0x00, 0x10] + [UInt8](repeating: 0xAB, count: 16),
                thenShutDown: false, reason: "handshake_failed"),
        Hostile(name: "truncated handshake", bytes: recordHeader + [0x01, 0x00], thenShutDown: true,
                reason: "handshake_truncated"),
        Hostile(name: "stops mid-handshake", bytes: recordHeader + [0x01, 0x00], thenShutDown: false,
                reason: "handshake_timeout"),
    ])
    func hostileInputOnTheTLSPortIsClosed(_ hostile: Hostile) async throws {
        let server = try NativeTLSServer.start()
        defer { server.stop() }
        let bystander = try await server.connect()
        let list = try await bystander.createList(name: "bystander", icon: "Inbox")

        let port = server.port
        let closed = try await BlockingWork.run { () throws -> Bool in
            let socket = try FrameSocket(port: port, timeout: .seconds(10))
            defer { socket.close() }
            try socket.send(hostile.bytes)
            if hostile.thenShutDown { try socket.shutdownSending() }
            return try socket.readsUntilClosed(atMost: 64)
        }
        #expect(closed, "the server closes the connection after at most an alert")
        #expect(server.process.waitForStandardError(containing: "event=tls_failed"))
        #expect(server.process.standardError.contains("reason=\(hostile.reason)"), "\(server.process.standardError)")

        let stats = try await bystander.stats()
        let tls = try #require(stats.tls)
        let counted: UInt64 = switch hostile.reason {
        case "not_tls": tls.notTLS
        case "handshake_failed": tls.handshakeFailures
        case "handshake_truncated": tls.handshakesTruncated
        default: tls.handshakeTimeouts
        }
        #expect(counted == 1, "\(tls)")
        #expect(try await bystander.lists().map(\.id) == [list.id], "the other connection is unaffected")
        await bystander.close()
    }

    /// A TLS client on `--plain-port` gets the plaintext ERROR of a frame
    /// too large (which it reads as "not TLS") and is closed, logged and
    /// counted; plaintext clients are served there.
    @Test func tlsOnThePlainPortIsClosed() async throws {
        let server = try NativeTLSServer.start(nil, ["--plain-port", "0"])
        defer { server.stop() }
        let plainPort = try #require(server.plainPort, "\(server.process.standardOutput)")
        let plain = try await ChecklistConnection.connect(host: "127.0.0.1", port: plainPort, clientName: "plain")
        _ = try await plain.createList(name: "plain", icon: "Inbox")

        let error = try await #require(throws: ClientError.self) {
            _ = try await ChecklistConnection.connect(host: "127.0.0.1", port: plainPort, clientName: "tls",
                                                      timeout: .seconds(5), tls: server.certificates.clientConfiguration())
        }
        #expect(error.code == .tlsFailed, "\(error)")
        #expect(error.message.contains("does not speak TLS"), "the plaintext ERROR tells it: \(error)")
        #expect(server.process.waitForStandardError(containing: "event=tls_on_plain_port"))
        let stats = try await plain.stats()
        #expect(stats.tls?.tlsOnPlainPort == 1)
        #expect(try await plain.lists().map(\.name) == ["plain"])
        let overTLS = try await server.connect()
        #expect(try await overTLS.lists().map(\.name) == ["plain"], "both ports serve the same store")
        await overTLS.close()
        await plain.close()
    }

    /// Many mutated ClientHellos: every one ends in a close, the server
    /// keeps serving, and every connection is counted once.
    @Test func mutatedClientHellosAreEachClosed() async throws {
        let server = try NativeTLSServer.start()
        defer { server.stop() }
        let certificates = server.certificates
        let port = server.port
        // A real ClientHello, captured from our own client session.
        let hello = try Self.clientHello(certificates)
        let rounds = 200
        let outcomes = try await BlockingWork.run { () throws -> Int in
            var random = SplitMix64(seed: 0x7_15F0)
            var closed = 0
            for _ in 0..<rounds {
                var bytes = hello
                for _ in 0..<(1 + Int(random.next() % 8)) {
                    bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
                }
                bytes[0] = 0x16  // past the plaintext check: into OpenSSL
                bytes = Array(bytes.prefix(1 + Int(random.next() % UInt64(bytes.count))))
                let socket = try FrameSocket(port: port, timeout: .seconds(10))
                try socket.send(bytes)
                try socket.shutdownSending()
                if try socket.readsUntilClosed(atMost: 16 << 10) { closed += 1 }
                socket.close()
            }
            return closed
        }
        #expect(outcomes == rounds)
        let client = try await server.connect()
        let tls = try #require(try await client.stats().tls)
        #expect(tls.handshakes == 1, "only the checking client completes a handshake")
        // A mangled record version reads as "not TLS" to OpenSSL: counted there.
        #expect(tls.notTLS + tls.handshakeFailures + tls.handshakesTruncated == UInt64(rounds), "each one counted once: \(tls)")
        await client.close()
    }

    /// The first flight a ChecklistTLS client session sends.
    static func clientHello(_ certificates: TestCertificates) throws -> [UInt8] {
        let session = try TLSSession(client: try TLSContext(client: certificates.clientConfiguration()), serverName: "localhost")
        _ = try session.handshake()
        var bytes = [UInt8](repeating: 0, count: session.pendingOutput)
        _ = bytes.withUnsafeMutableBytes { session.takeOutput(into: $0) }
        return bytes
    }
}

extension FrameSocket {
    /// Reads until the server closes; true if it did so within `atMost`
    /// bytes (an alert, say) and the socket's timeout.
    func readsUntilClosed(atMost limit: Int) throws -> Bool {
        while bufferedByteCount <= limit {
            switch try readMore() {
            case .data: continue
            case .closed: return true
            case .timedOut: return false
            }
        }
        return false
    }
}
