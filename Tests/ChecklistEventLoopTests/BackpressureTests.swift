import ChecklistSocket
@testable import ChecklistEventLoop
import Glibc
import Synchronization
import Testing

@Suite("Back-pressure and output limits", .serialized, .timeLimit(.minutes(1)))
struct BackpressureTests {
    static let smallLimits = ConnectionLimits(
        outputHighWaterMark: 64 << 10, outputLowWaterMark: 16 << 10, maxOutputBytes: 1 << 20)

    /// A client that asks for 16 MB answers and never reads is aborted once
    /// its pending output passes maxOutputBytes (1 MB), while another client
    /// on the same (single) loop keeps being answered.
    ///
    /// The answer is larger than the kernel socket buffers can take in one
    /// send (loopback: a few MB), so the limit is crossed at the first flush
    /// after the request. (With smaller answers the server would instead stop
    /// reading this client at the high-water mark, which is also fine: it
    /// stalls only itself.)
    @Test func clientThatNeverReadsIsDroppedOthersKeepGoing() throws {
        var config = LineServerConfig()
        config.floodBytes = 16 << 20
        config.respectBackpressure = false
        try withLineServer(threads: 1, limits: Self.smallLimits, config: config) { server, events in
            let slow = try TestClient(port: server.boundPort)
            let fast = try TestClient(port: server.boundPort)
            var rounds = 0
            while server.statistics.connectionsDroppedForOutput == 0 && rounds < 20 {
                rounds += 1
                do {
                    try slow.send("FLOOD\n")
                } catch let error as SocketError where error.isDisconnect {
                    break  // already reset by the server
                }
                try fast.send("ping \(rounds)\n")
                #expect(try fast.readLine() == "ping \(rounds)")
            }
            #expect(events.closed.wait(seconds: 10))
            #expect(server.statistics.connectionsDroppedForOutput == 1)
            #expect(events.snapshot.closed == [1])
            for i in 0..<100 {
                try fast.send("after \(i)\n")
                #expect(try fast.readLine() == "after \(i)")
            }
            _ = try slow.readToEnd()  // what the kernel had, then reset or EOF
        }
    }

    /// Pushes from another thread to a subscriber that stopped reading are
    /// bounded the same way.
    @Test func pushesToASubscriberThatStoppedReadingAreBounded() throws {
        try withLineServer(threads: 2, limits: Self.smallLimits) { server, events in
            let subscriber = try TestClient(port: server.boundPort)
            try subscriber.send("SUB\n")
            #expect(try subscriber.readLine() == "OK")
            let handle = try #require(events.snapshot.subscribers.first)
            let payload = [UInt8](repeating: UInt8(ascii: "p"), count: 64 << 10)
            // 1000 x 64 KB = 64 MB queued: far more than kernel buffers hold.
            for _ in 0..<1000 {
                handle.execute { connection in connection.write(payload) }
            }
            #expect(events.closed.wait(seconds: 20))
            #expect(server.statistics.connectionsDroppedForOutput == 1)
            let other = try TestClient(port: server.boundPort)
            try other.send("alive\n")
            #expect(try other.readLine() == "alive")
        }
    }

    /// A handler that stops consuming while output is backlogged gets the rest
    /// of its input offered again when the output drains, with no new bytes
    /// arriving: 200 pipelined 100 KB answers (20 MB) all arrive, in order.
    @Test func backloggedInputIsRedeliveredWhenOutputDrains() throws {
        try withLineServer(threads: 1, limits: Self.smallLimits) { server, _ in
            let client = try TestClient(port: server.boundPort)
            var requests = ""
            for i in 0..<200 { requests += "BIG\nmarker \(i)\n" }
            try client.send(requests)
            let big = String(repeating: "b", count: LineServerConfig().bigBytes)
            for i in 0..<200 {
                #expect(try client.readLine() == big)
                #expect(try client.readLine() == "marker \(i)")
            }
            #expect(server.statistics.connectionsDroppedForOutput == 0)
        }
    }

    /// Same, for a handler that holds input back by a budget of its own,
    /// below the connection's high-water mark (so `isOutputBacklogged` never
    /// turns true): held-back requests are still offered again.
    @Test func inputHeldBackByAHandlerBudgetIsRedelivered() throws {
        var config = LineServerConfig()
        config.respectBackpressure = false
        config.outputBudget = 150 << 10  // one 100 KB answer at a time
        try withLineServer(threads: 1, config: config) { server, _ in
            let client = try TestClient(port: server.boundPort)
            var requests = ""
            for i in 0..<50 { requests += "BIG\nmarker \(i)\n" }
            try client.send(requests)
            let big = String(repeating: "b", count: config.bigBytes)
            for i in 0..<50 {
                #expect(try client.readLine() == big)
                #expect(try client.readLine() == "marker \(i)")
            }
        }
    }
}
