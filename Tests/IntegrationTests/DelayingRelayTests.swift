import ChecklistSocket
import ChecklistTesting
import Foundation
import Synchronization
import Testing

/// The relay that adds latency to a link (`DelayingRelay`), on 127.0.0.1
/// in front of an echo server: bytes arrive whole and in order, a round
/// trip takes at least twice the latency, half-closes pass through, and no
/// more connections than its bound are relayed. Needs no privilege.
@Suite(.timeLimit(.minutes(2)))
struct DelayingRelayTests {
    @Test func aRoundTripTakesTwiceTheLatencyAndBytesArriveInOrder() async throws {
        let echo = try EchoServer()
        defer { echo.stop() }
        let relay = try DelayingRelay(to: try SocketAddress(host: "127.0.0.1", port: echo.port), latency: .milliseconds(30),
                                      bufferLimit: 64 << 10)
        defer { relay.stop() }
        let payload = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
        let seen = try await BlockingWork.run { () throws -> (ping: [UInt8], roundTrip: Duration, echoed: [UInt8], end: SocketReadResult) in
            let fd = try connectSocket(host: relay.host, port: relay.port)
            defer { closeSocket(fd) }
            let started = ContinuousClock.now
            try writeAll(fd, Array("ping".utf8))
            let ping = try readExactly(fd, 4)
            let roundTrip = started.duration(to: .now)

            // 1 MiB through 64 KiB queues: the relay's bound holds the
            // sender back instead of buffering it all. A thread writes while
            // this one reads, so neither side's buffers fill up.
            let writer = Thread {
                try? writeAll(fd, payload)
                try? shutdownSocket(fd, .write)
            }
            writer.start()
            let echoed = try readExactly(fd, payload.count)
            var byte: UInt8 = 0
            return (ping, roundTrip, echoed, try withUnsafeMutableBytes(of: &byte) { try readSocket(fd, into: $0) })
        }
        #expect(seen.ping == Array("ping".utf8))
        #expect(seen.roundTrip >= .milliseconds(60), "\(seen.roundTrip)")
        #expect(seen.echoed == payload)
        // The half-close passed through the relay, the echo server, and back.
        #expect(seen.end == .endOfFile)
        #expect(relay.connectionsAccepted == 1)
    }

    @Test func connectionsBeyondTheBoundAreClosed() async throws {
        let echo = try EchoServer()
        defer { echo.stop() }
        let relay = try DelayingRelay(to: try SocketAddress(host: "127.0.0.1", port: echo.port), latency: .milliseconds(1),
                                      maximumConnections: 1)
        defer { relay.stop() }
        let seen = try await BlockingWork.run { () throws -> (first: [UInt8], second: SocketReadResult?) in
            let first = try connectSocket(host: relay.host, port: relay.port)
            defer { closeSocket(first) }
            try writeAll(first, [1])
            let echoed = try readExactly(first, 1)  // relayed: it holds the one place
            let second = try connectSocket(host: relay.host, port: relay.port)
            defer { closeSocket(second) }
            try writeAll(second, [2])
            var byte: UInt8 = 0
            return (echoed, try? withUnsafeMutableBytes(of: &byte) { try readSocket(second, into: $0) })
        }
        #expect(seen.first == [1])
        // Closed on accept: its end of file, or a reset for the byte it sent.
        #expect(seen.second == .endOfFile || seen.second == nil, "the connection over the bound was relayed")
        #expect(relay.connectionsAccepted == 1)
    }

    /// A stalled link passes nothing while its sockets stay open; healed,
    /// it passes what it held.
    @Test func aStalledLinkHoldsTheBytesUntilHealed() async throws {
        let echo = try EchoServer()
        defer { echo.stop() }
        let relay = try DelayingRelay(to: try SocketAddress(host: "127.0.0.1", port: echo.port), latency: .zero)
        defer { relay.stop() }
        let seen = try await BlockingWork.run { () throws -> (before: [UInt8], during: SocketReadResult, after: [UInt8]) in
            let fd = try connectSocket(host: relay.host, port: relay.port)
            defer { closeSocket(fd) }
            try writeAll(fd, [1])
            let before = try readExactly(fd, 1)
            relay.stall()
            try writeAll(fd, [2])
            // Nothing for 300 ms (a bound on the look, not a wait for readiness).
            try setTimeouts(fd, receive: .milliseconds(300), send: nil)
            var byte: UInt8 = 0
            let during = try withUnsafeMutableBytes(of: &byte) { try readSocket(fd, into: $0) }
            relay.heal()
            try setTimeouts(fd, receive: .seconds(10), send: nil)
            return (before, during, try readExactly(fd, 1))
        }
        #expect(seen.before == [1])
        #expect(seen.during == .wouldBlock, "a byte passed the stalled link")
        #expect(seen.after == [2])
    }

    /// Reset: the relayed connection is cut, new ones are refused (and not
    /// counted) until the link heals; then it relays again.
    @Test func aResetLinkCutsAndRefusesConnectionsUntilHealed() async throws {
        let echo = try EchoServer()
        defer { echo.stop() }
        let relay = try DelayingRelay(to: try SocketAddress(host: "127.0.0.1", port: echo.port), latency: .zero)
        defer { relay.stop() }
        let seen = try await BlockingWork.run { () throws -> (cut: SocketReadResult?, refused: SocketReadResult?, healed: [UInt8]) in
            let first = try connectSocket(host: relay.host, port: relay.port)
            defer { closeSocket(first) }
            try writeAll(first, [1])
            _ = try readExactly(first, 1)
            relay.resetConnections()
            var byte: UInt8 = 0
            let cut = try? withUnsafeMutableBytes(of: &byte) { try readSocket(first, into: $0) }
            let second = try connectSocket(host: relay.host, port: relay.port)
            defer { closeSocket(second) }
            let refused = try? withUnsafeMutableBytes(of: &byte) { try readSocket(second, into: $0) }
            relay.heal()
            let third = try connectSocket(host: relay.host, port: relay.port)
            defer { closeSocket(third) }
            try writeAll(third, [3])
            return (cut, refused, try readExactly(third, 1))
        }
        // An end of file, or the reset itself (a read error).
        #expect(seen.cut == .endOfFile || seen.cut == nil)
        #expect(seen.refused == .endOfFile || seen.refused == nil)
        #expect(seen.healed == [3])
        #expect(relay.connectionsAccepted == 2, "the refused connection was counted as relayed")
    }
}

/// Reads exactly `count` bytes from blocking `fd`; throws at an early end.
private func readExactly(_ fd: Int32, _ count: Int) throws -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    var got = 0
    while got < count {
        let result = try bytes.withUnsafeMutableBytes { try readSocket(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[got...])) }
        guard case .bytes(let n) = result else { throw ChildProcessError("the stream ended after \(got) of \(count) bytes") }
        got += n
    }
    return bytes
}

/// An echo server on 127.0.0.1: each connection gets back what it sends,
/// and its end of file once it sent its own.
private final class EchoServer: Sendable {
    let port: UInt16
    private let listenFD: Int32

    init() throws {
        let (fd, port) = try makeListeningSocket(host: "127.0.0.1", port: 0)
        try setNonBlocking(fd, false)
        listenFD = fd
        self.port = port
        let thread = Thread { [listenFD] in
            while let accepted = try? acceptConnection(listenFD) {
                let connection = Thread {
                    defer { closeSocket(accepted.fd) }
                    guard (try? setNonBlocking(accepted.fd, false)) != nil else { return }
                    var buffer = [UInt8](repeating: 0, count: 16 << 10)
                    while case .bytes(let n)? = try? buffer.withUnsafeMutableBytes({ try readSocket(accepted.fd, into: $0) }) {
                        guard (try? writeAll(accepted.fd, Array(buffer[..<n]))) != nil else { return }
                    }
                    try? shutdownSocket(accepted.fd, .write)
                }
                connection.start()
            }
            closeSocket(listenFD)
        }
        thread.start()
    }

    func stop() { try? shutdownSocket(listenFD, .both) }
}
