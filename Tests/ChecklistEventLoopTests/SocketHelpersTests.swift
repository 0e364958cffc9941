import ChecklistSocket
import Glibc
import Testing

@Suite("ChecklistSocket helpers", .timeLimit(.minutes(10)))
struct SocketHelpersTests {
    @Test(arguments: [
        ("127.0.0.1:80", "127.0.0.1", UInt16(80), "127.0.0.1:80"),
        ("localhost:8080", "127.0.0.1", 8080, "127.0.0.1:8080"),
        ("0.0.0.0:0", "0.0.0.0", 0, "0.0.0.0:0"),
        ("[::1]:9000", "::1", 9000, "[::1]:9000"),
        ("[::]:65535", "::", 65535, "[::]:65535"),
    ])
    func parsesAddresses(text: String, host: String, port: UInt16, description: String) throws {
        let address = try SocketAddress(parsing: text)
        #expect(address.host == host)
        #expect(address.port == port)
        #expect(address.description == description)
    }

    @Test(arguments: ["", "nope", "1.2.3.4", "1.2.3.4:", ":80", "1.2.3.4:99999", "1.2.3.4:-1",
                      "256.1.1.1:80", "::1:80", "[::1]", "example.com:80", "[127.0.0.1]x:80"])
    func rejectsBadAddresses(text: String) {
        #expect(throws: SocketError.self) { try SocketAddress(parsing: text) }
        do {
            _ = try SocketAddress(parsing: text)
        } catch {
            #expect(error.code == EINVAL)
        }
    }

    @Test func listeningOnPortZeroReportsTheBoundPort() throws {
        let (fd, port) = try makeListeningSocket(host: "127.0.0.1", port: 0)
        defer { closeSocket(fd) }
        #expect(port != 0)
        #expect(try localAddress(of: fd) == SocketAddress(host: "127.0.0.1", port: port))
        #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0)
        #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)

        let client = try connectSocket(host: "127.0.0.1", port: port)
        defer { closeSocket(client) }
        // The listener is non-blocking; the connection is queued already.
        let accepted = try #require(try acceptConnection(fd))
        defer { closeSocket(accepted.fd) }
        #expect(accepted.peer == (try localAddress(of: client)))
        #expect(try acceptConnection(fd) == nil)  // EAGAIN is a value, not an error

        var buffer = [UInt8](repeating: 0, count: 16)
        let result = try buffer.withUnsafeMutableBytes { try readSocket(accepted.fd, into: $0) }
        #expect(result == .wouldBlock)
        try writeAll(client, Array("hi".utf8))
        try shutdownSocket(client, .write)
        try setNonBlocking(accepted.fd, false)
        let first = try buffer.withUnsafeMutableBytes { try readSocket(accepted.fd, into: $0) }
        #expect(first == .bytes(2))
        let second = try buffer.withUnsafeMutableBytes { try readSocket(accepted.fd, into: $0) }
        #expect(second == .endOfFile)
    }

    @Test func connectToAClosedPortIsRefused() throws {
        let (fd, port) = try makeListeningSocket(host: "127.0.0.1", port: 0)
        closeSocket(fd)
        #expect {
            _ = try connectSocket(host: "127.0.0.1", port: port)
        } throws: { error in
            (error as? SocketError)?.code == ECONNREFUSED
        }
    }

    @Test func writingToAResetPeerIsAnErrorNotASignal() throws {
        let (listener, port) = try makeListeningSocket(host: "127.0.0.1", port: 0)
        defer { closeSocket(listener) }
        let client = try connectSocket(host: "127.0.0.1", port: port)
        defer { closeSocket(client) }
        let accepted = try #require(try acceptConnection(listener))
        closeSocket(accepted.fd)
        // The first write may succeed (the reset arrives in reply); a later one fails.
        let bytes = [UInt8](repeating: 1, count: 1024)
        var failure: SocketError?
        for _ in 0..<100 where failure == nil {
            do { try writeAll(client, bytes) } catch { failure = error }
        }
        #expect(failure?.isDisconnect == true)
    }

    @Test func raisesTheDescriptorLimitToTheHardLimit() {
        let limits = raiseFileDescriptorLimit()
        #expect(limits.soft > 0)
        #expect(limits.soft == limits.hard)
    }
}
