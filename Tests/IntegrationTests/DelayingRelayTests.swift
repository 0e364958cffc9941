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
