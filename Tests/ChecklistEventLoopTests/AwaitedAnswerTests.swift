import ChecklistSocket
@testable import ChecklistEventLoop
import ChecklistThreads
import Glibc
import Synchronization
import Testing

/// `SocketConnection.beginAwaitingAnswer`: while a handler has an answer made off
/// the loop, the connection reads nothing, then offers the input it holds
/// again; a graceful close (server shutdown) waits for the answer, up to
/// its deadline.
@Suite("Answers made off the loop", .serialized, .timeLimit(.minutes(1)))
struct AwaitedAnswerTests {
    @Test func linesBehindAnAwaitedAnswerWaitForIt() throws {
        try withLineServer(threads: 1) { server, events in
            let client = try TestClient(port: server.boundPort)
            // One line pipelined behind LATER, one sent while it is awaited.
            try client.send("LATER\nbehind\n")
            #expect(events.awaiting.wait(seconds: 10))
            try client.send("during\n")
            // Another connection of the same loop is served meanwhile.
            let other = try TestClient(port: server.boundPort)
            try other.send("hello\n")
            #expect(try other.readLine() == "hello")
            events.answerLater()
            #expect(try client.readLine() == "LATE")
            #expect(try client.readLine() == "behind")
            #expect(try client.readLine() == "during")
        }
    }

    @Test func shutdownWaitsForTheAwaitedAnswer() throws {
        let group = try EventLoopGroup(threads: 1)
        group.start()
        defer { group.shutdownAndJoin() }
        let events = ServerEvents(expectedCloses: 1)
        let server = try TCPServer(host: "127.0.0.1", port: 0, group: group) { _ in
            LineHandler(config: LineServerConfig(), events: events)
        }
        let client = try TestClient(port: server.boundPort)
        try client.send("LATER\n")
        #expect(events.awaiting.wait(seconds: 10))
        let result = Mutex<TCPServer.ShutdownResult?>(nil)
        let shutdown = NativeThread.spawn(name: "shutdown") {
            let outcome = server.shutdown(timeout: .seconds(20))
            result.withLock { $0 = outcome }
        }
        // The handler was told (and the close asked for) before the answer.
        #expect(try client.readLine() == "SHUTDOWN")
        events.answerLater()
        #expect(try client.readLine() == "LATE")
        #expect(try client.readLine() == nil)
        client.close()
        shutdown.join()
        #expect(result.withLock { $0 } == TCPServer.ShutdownResult(graceful: true, abortedConnections: 0))
        #expect(events.closed.wait(seconds: 10))
    }

    @Test func anAnswerThatMissesTheShutdownDeadlineIsAborted() throws {
        let group = try EventLoopGroup(threads: 1)
        group.start()
        defer { group.shutdownAndJoin() }
        let events = ServerEvents(expectedCloses: 1)
        let server = try TCPServer(host: "127.0.0.1", port: 0, group: group) { _ in
            LineHandler(config: LineServerConfig(), events: events)
        }
        let client = try TestClient(port: server.boundPort)
        try client.send("LATER\n")
        #expect(events.awaiting.wait(seconds: 10))
        let result = server.shutdown(timeout: .milliseconds(300))
        #expect(result == TCPServer.ShutdownResult(graceful: false, abortedConnections: 1))
        #expect(events.closed.wait(seconds: 10))
        // The answer comes too late: the connection is gone, nothing runs.
        events.answerLater()
        #expect(barrier(group))
        #expect(try client.readLine() == "SHUTDOWN")
        #expect(try client.readToEnd().isEmpty)
    }
}
