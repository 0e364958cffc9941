import ChecklistSocket
@testable import ChecklistEventLoop
import ChecklistThreads
import Glibc
import Synchronization
import Testing

@Suite("TCPServer", .serialized, .timeLimit(.minutes(1)))
struct TCPServerTests {
    @Test func portZeroReportsTheRealPort() throws {
        try withLineServer { server, _ in
            #expect(server.boundPort != 0)
            #expect(server.localAddress == "127.0.0.1:\(server.boundPort)")
            let client = try TestClient(port: server.boundPort)
            try client.send("hello\n")
            #expect(try client.readLine() == "hello")
        }
    }

    /// `write(taking:)` takes the array when nothing is pending and copies
    /// it behind pending output otherwise: the bytes go out in order, and
    /// the caller gets an empty array back both times.
    @Test func writeTakingKeepsOrder() throws {
        try withLineServer { server, _ in
            let client = try TestClient(port: server.boundPort)
            // Alone (the first batch is taken), then behind an echo (copied).
            try client.send("TAKE\n")
            for expected in ["TAKEN 1", "TAKEN 2", "EMPTY true"] { #expect(try client.readLine() == expected) }
            try client.send("before\nTAKE\nafter\n")
            for expected in ["before", "TAKEN 1", "TAKEN 2", "EMPTY true", "after"] {
                #expect(try client.readLine() == expected)
            }
        }
    }

    @Test func concurrentClientsGetTheirOwnAnswers() throws {
        try withLineServer(threads: 2) { server, _ in
            let port = server.boundPort
            let failures = Mutex<[String]>([])
            onThreads(8) { client in
                do {
                    let connection = try TestClient(port: port)
                    for i in 0..<200 {
                        let line = "client \(client) line \(i)"
                        try connection.send(line + "\n")
                        let answer = try connection.readLine()
                        if answer != line { failures.withLock { $0.append("\(line) -> \(answer ?? "EOF")") } }
                    }
                } catch {
                    failures.withLock { $0.append("client \(client): \(error)") }
                }
            }
            #expect(failures.withLock { $0 } == [])
            // Counters are bumped right after each send: let every loop finish its batch.
            #expect(barrier(server.group))
            let stats = server.statistics
            #expect(stats.connectionsTotal == 8)
            #expect(stats.bytesIn == stats.bytesOut)
        }
    }

    @Test func pipelinedBurstIsAnsweredInOrder() throws {
        try withLineServer { server, _ in
            let client = try TestClient(port: server.boundPort)
            let count = 10_000
            var burst: [UInt8] = []
            for i in 0..<count { burst.append(contentsOf: "message \(i)\n".utf8) }
            // Write everything before reading anything, from another thread so
            // a full socket cannot deadlock the test.
            let fd = client.fd
            let writer = NativeThread.spawn(name: "burst-writer") { [burst] in
                try? writeAll(fd, burst)
            }
            defer { writer.join() }
            for i in 0..<count {
                let line = try client.readLine()
                guard line == "message \(i)" else {
                    Issue.record("answer \(i) was \(line ?? "EOF")")
                    return
                }
            }
        }
    }

    @Test func oneByteWritesAreReassembled() throws {
        try withLineServer { server, _ in
            let client = try TestClient(port: server.boundPort)
            let lines = ["a", "hello world", "", "last line with some length"]
            for line in lines {
                for byte in (line + "\n").utf8 { try client.send([byte]) }
            }
            for line in lines { #expect(try client.readLine() == line) }
        }
    }

    @Test func halfClosedClientStillGetsEveryAnswer() throws {
        try withLineServer { server, events in
            let client = try TestClient(port: server.boundPort)
            var requests = ""
            for i in 0..<500 { requests += "request \(i)\n" }
            try client.send(requests)
            try shutdownSocket(client.fd, .write)
            for i in 0..<500 { #expect(try client.readLine() == "request \(i)") }
            #expect(try client.readLine() == nil)  // then the server closes
            #expect(events.closed.wait(seconds: 10))
        }
    }

    @Test func handlerCloseSendsPendingOutputFirst() throws {
        try withLineServer { server, events in
            let client = try TestClient(port: server.boundPort)
            try client.send("one\nBIG\nCLOSE\nignored\n")
            #expect(try client.readLine() == "one")
            #expect(try client.readLine()?.count == LineServerConfig().bigBytes)
            #expect(try client.readLine() == "BYE")
            #expect(try client.readLine() == nil)
            client.close()  // ends the server's linger at once
            #expect(events.closed.wait(seconds: 10))
        }
    }

    @Test func inputBeyondTheLimitClosesTheConnection() throws {
        var config = LineServerConfig()
        config.maxInputBytes = 1024
        try withLineServer(config: config) { server, events in
            let client = try TestClient(port: server.boundPort)
            try client.send("short\n")
            #expect(try client.readLine() == "short")
            // 8 KB without a newline: never consumable, so over the limit.
            try client.send([UInt8](repeating: UInt8(ascii: "z"), count: 8192))
            #expect(try client.readToEnd() == [])
            client.close()
            #expect(events.closed.wait(seconds: 10))
            // Others are unaffected.
            let other = try TestClient(port: server.boundPort)
            try other.send("still here\n")
            #expect(try other.readLine() == "still here")
        }
    }

    @Test func connectionsBeyondTheLimitAreTurnedAway() throws {
        let limits = ConnectionLimits(maxConnections: 2)
        try withLineServer(limits: limits, events: ServerEvents(expectedCloses: 2)) { server, events in
            let first = try TestClient(port: server.boundPort)
            let second = try TestClient(port: server.boundPort)
            for client in [first, second] {
                try client.send("in\n")
                #expect(try client.readLine() == "in")
            }
            let third = try TestClient(port: server.boundPort)
            #expect(try third.readLine() == "FULL")
            #expect(try third.readLine() == nil)
            third.close()
            #expect(server.statistics.connectionsRejected == 1)
            #expect(server.statistics.connectionsOpen == 2)

            // Freeing a slot admits the next one.
            first.close()
            #expect(events.closed.wait(seconds: 10))  // the rejected one and `first`
            let fourth = try TestClient(port: server.boundPort)
            try fourth.send("admitted\n")
            #expect(try fourth.readLine() == "admitted")
            _ = second
        }
    }

    @Test func connectionsAreSpreadRoundRobinAndKnowTheirPeer() throws {
        try withLineServer(threads: 2) { server, events in
            var localPorts: [UInt64: UInt16] = [:]
            var clients: [TestClient] = []
            for id in UInt64(1)...4 {
                // One at a time, so accept order (and so ids) follow client order.
                let client = try TestClient(port: server.boundPort)
                try client.send("x\n")
                #expect(try client.readLine() == "x")
                localPorts[id] = try localAddress(of: client.fd).port
                clients.append(client)
            }
            let seen = events.snapshot
            #expect(seen.opened == [1, 2, 3, 4])
            #expect(seen.loopOf == [1: 0, 2: 1, 3: 0, 4: 1])
            for (id, port) in localPorts {
                #expect(seen.peerOf[id] == "127.0.0.1:\(port)")
            }
        }
    }
}

@Suite("Many connections", .serialized, .timeLimit(.minutes(1)))
struct ManyConnectionsTests {
    /// 2,000 connections open at once (the descriptor budget of one test
    /// process holds both ends), each answered, then all closed.
    @Test func thousandsOfConcurrentConnections() throws {
        let descriptors = raiseFileDescriptorLimit().soft
        let count = min(2000, Int(descriptors) / 2 - 200)  // both ends live in this process
        try withLineServer(threads: 2, events: ServerEvents(expectedCloses: count)) { server, events in
            var clients: [TestClient] = []
            for _ in 0..<count { clients.append(try TestClient(port: server.boundPort)) }
            for (i, client) in clients.enumerated() { try client.send("hello \(i)\n") }
            for (i, client) in clients.enumerated() { #expect(try client.readLine() == "hello \(i)") }
            #expect(server.statistics.connectionsOpen == count)
            for client in clients { client.close() }
            #expect(events.closed.wait(seconds: 20))
            #expect(server.statistics.connectionsOpen == 0)
        }
    }
}
