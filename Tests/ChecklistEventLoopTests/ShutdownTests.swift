import ChecklistSocket
@testable import ChecklistEventLoop
import ChecklistThreads
import Glibc
import Synchronization
import Testing

@Suite("Graceful shutdown", .serialized, .timeLimit(.minutes(1)))
struct ShutdownTests {
    @Test func shutdownTellsHandlersFlushesAndClosesEverything() throws {
        let group = try EventLoopGroup(threads: 2)
        group.start()
        defer { group.shutdownAndJoin() }
        let events = ServerEvents(expectedCloses: 6)
        let server = try TCPServer(host: "127.0.0.1", port: 0, group: group) { _ in
            LineHandler(config: LineServerConfig(), events: events)
        }
        let clients = try (0..<6).map { _ in try TestClient(port: server.boundPort) }
        for client in clients {
            try client.send("hi\n")
            #expect(try client.readLine() == "hi")
        }
        // One client has a large answer still in flight when shutdown starts.
        try clients[0].send("BIG\n")

        let result = Mutex<TCPServer.ShutdownResult?>(nil)
        let shutdown = NativeThread.spawn(name: "shutdown") {
            let outcome = server.shutdown(timeout: .seconds(20))
            result.withLock { $0 = outcome }
        }
        #expect(try clients[0].readLine()?.count == LineServerConfig().bigBytes)
        for client in clients {
            #expect(try client.readLine() == "SHUTDOWN")
            #expect(try client.readLine() == nil)
            client.close()  // lets the server's lingering close finish at once
        }
        shutdown.join()
        #expect(result.withLock { $0 } == TCPServer.ShutdownResult(graceful: true, abortedConnections: 0))
        #expect(events.closed.wait(seconds: 10))
        #expect(server.statistics.connectionsOpen == 0)
        #expect(events.snapshot.wrongThread == 0)
        // The listener is gone.
        #expect(throws: SocketError.self) { _ = try connectSocket(host: "127.0.0.1", port: server.boundPort) }
        #expect(server.shutdown().graceful)  // a second call is harmless
    }

    @Test func shutdownAbortsWhatMissesTheDeadline() throws {
        let group = try EventLoopGroup(threads: 1)
        group.start()
        defer { group.shutdownAndJoin() }
        let events = ServerEvents(expectedCloses: 1)
        var config = LineServerConfig()
        config.floodBytes = 8 << 20
        config.respectBackpressure = false
        let limits = ConnectionLimits(maxOutputBytes: 64 << 20)
        let server = try TCPServer(host: "127.0.0.1", port: 0, group: group, limits: limits) { [config] _ in
            LineHandler(config: config, events: events)
        }
        // This client asks for 8 MB and never reads: its output cannot drain.
        let stuck = try TestClient(port: server.boundPort)
        try stuck.send("ping\nFLOOD\n")
        #expect(try stuck.readLine() == "ping")
        let start = ContinuousClock.now
        let result = server.shutdown(timeout: .milliseconds(300))
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(result == TCPServer.ShutdownResult(graceful: false, abortedConnections: 1))
        #expect(events.closed.wait(seconds: 10))
    }

    @Test func stoppingTheGroupAbortsConnectionsAndTellsHandlers() throws {
        let group = try EventLoopGroup(threads: 2)
        group.start()
        let events = ServerEvents(expectedCloses: 2)
        let server = try TCPServer(host: "127.0.0.1", port: 0, group: group) { _ in
            LineHandler(config: LineServerConfig(), events: events)
        }
        let clients = try (0..<2).map { _ in try TestClient(port: server.boundPort) }
        for client in clients {
            try client.send("x\n")
            #expect(try client.readLine() == "x")
        }
        group.shutdownAndJoin()
        #expect(events.closed.wait(seconds: 0))
        for client in clients { #expect(try client.readToEnd() == []) }
        #expect(server.statistics.connectionsOpen == 0)
    }
}
