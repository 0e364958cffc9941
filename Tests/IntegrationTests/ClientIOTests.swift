@testable import ChecklistClient
import ChecklistIO
import ChecklistSocket
import ChecklistModel
import ChecklistWire
import Foundation
import Synchronization
import Testing

/// The client's I/O thread against the real server: writes never block a
/// caller (a stalled server fills only a bounded queue, then
/// `.sendQueueFull`), a failure of the readiness layer becomes
/// `ClientError.ioFailed` (never a crash), and both readiness
/// implementations (epoll, and `poll(2)`, the one Apple platforms use)
/// serve plaintext and TLS connections.
@Suite(.timeLimit(.minutes(10))) struct ClientIOTests {
    /// This suite's own I/O threads, apart from the process's `checklist-io`.
    static let threadName = "checklist-iot"

    /// A stopped server (SIGSTOP) reads nothing: once the kernel's buffers
    /// are full, frames stay in the connection's queue, and the request
    /// that would take it past its bound is refused at once with
    /// `.sendQueueFull`. Nothing waited on the socket, the connection stays
    /// open, and once the server runs again every queued request is answered.
    @Test(arguments: ReadinessKind.allCases)
    func aStalledServerFillsOnlyTheBoundedQueue(kind: ReadinessKind) async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let io = try IOThread.start(kind, name: Self.threadName)
        let client = try await ChecklistConnection.connect(host: "127.0.0.1", port: server.port, clientName: "stalled",
                                                           io: io, sendQueueLimit: 64 << 10)
        server.process.send(signal: SIGSTOP)
        let answered = AwaitedState(0)
        let ping = Request.ping(Ping(data: [UInt8](repeating: 7, count: Ping.maxDataBytes)))
        var sent = 0
        var refusal: ClientError?
        // At most 200 MB: far beyond what loopback buffers hold.
        while sent < 200_000 {
            do throws(ClientError) {
                try client.core.send(ping) { answer in
                    if case .success = answer { answered.withLock { $0 += 1 } }
                }
                sent += 1
            } catch {
                refusal = error
                break
            }
        }
        let error = try #require(refusal, "the queue never filled")
        #expect(error.code == .sendQueueFull)
        #expect(!client.isClosed)
        #expect(client.core.state.withLock { $0.output.unwrittenBytes } <= 64 << 10)

        server.process.send(signal: SIGCONT)
        let expected = sent
        #expect(await answered.wait(timeout: .seconds(60)) { $0 == expected })
        _ = try await client.ping()
        await client.close()
    }

    /// A readiness layer whose wait fails on demand (`fail`), as an
    /// unexpected epoll or poll error would.
    final class FailingReadiness: Readiness {
        static let fail = Atomic<Bool>(false)
        let base: PollReadiness

        init(capacity: Int) throws(SocketError) { base = try PollReadiness(capacity: capacity) }
        var waker: ReadinessWaker { base.waker }
        func register(_ fd: Int32, token: UInt64, interest: ReadinessInterest) throws(SocketError) {
            try base.register(fd, token: token, interest: interest)
        }
        func update(_ fd: Int32, token: UInt64, interest: ReadinessInterest) throws(SocketError) {
            try base.update(fd, token: token, interest: interest)
        }
        func deregister(_ fd: Int32) { base.deregister(fd) }
        func wait(timeout: Duration?, _ ready: (ReadinessEvent) -> Void) throws(SocketError) {
            try base.wait(timeout: timeout, ready)
            if Self.fail.load(ordering: .acquiring) { throw SocketError(code: EIO, operation: "poll (injected)") }
        }
        func close() { base.close() }
    }

    /// The wait fails: the thread's connections close with `.ioFailed`, a
    /// connection handed to it later fails the same way, the process goes
    /// on, and the next connection on the shared thread works.
    @Test func anIOFailureClosesItsConnectionsWithAClientError() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let io = try IOThread.start(FailingReadiness.self, kind: .poll, name: Self.threadName)
        let client = try await ChecklistConnection.connect(host: "127.0.0.1", port: server.port, clientName: "failing", io: io)
        _ = try await client.ping()

        FailingReadiness.fail.store(true, ordering: .releasing)
        io.waker.wake()
        await client.core.waitUntilClosed()
        #expect(io.hasFailed)
        do {
            _ = try await client.ping()
            Issue.record("a request on a failed I/O thread succeeded")
        } catch let error as ClientError {
            #expect(error.code == .ioFailed)
            #expect(error.message.contains("injected"))
        }
        do {
            _ = try await ChecklistConnection.connect(host: "127.0.0.1", port: server.port, clientName: "late", io: io)
            Issue.record("a connection on a failed I/O thread opened")
        } catch let error as ClientError {
            #expect(error.code == .ioFailed)
        }
        let fresh = try await server.connect()
        _ = try await fresh.ping()
        await fresh.close()
    }

    /// Both readiness layers: pages of a keyed list from many tasks at once,
    /// half of them preferring the I/O thread as their executor. (TLS over
    /// each: the client suite run with `CHECKLIST_READINESS=poll`.)
    @Test(arguments: ReadinessKind.allCases)
    func bothReadinessLayersServeConnections(kind: ReadinessKind) async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let io = try IOThread.start(kind, name: Self.threadName)
        #expect(io.kind == kind)
        var clients: [ChecklistConnection] = []
        for n in 0..<4 {
            clients.append(try await ChecklistConnection.connect(host: "127.0.0.1", port: server.port,
                                                                 clientName: "\(kind)-\(n)", io: io))
        }
        let list = try await clients[0].createList(name: "Rows", icon: "")
        _ = try await clients[0].patch(list.id, ops: (0..<40).map {
            .insert(tempRef: nil, position: .end, fields: ItemFields(text: "row \($0)", clientKey: "k\($0)"))
        })
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (n, client) in clients.enumerated() {
                group.addTask(executorPreference: n % 2 == 0 ? io : nil) {
                    for round in 0..<25 {
                        let offset = UInt64((n + round) % 30)
                        let page = try await client.pageBytes(list.id, start: .offset(offset), limit: 10)
                        var keys: [String] = []
                        page.forEachRow { keys.append($0.clientKey ?? "") }
                        #expect(keys == (0..<10).map { "k\(Int(offset) + $0)" })
                    }
                }
            }
            try await group.waitForAll()
        }
        for client in clients { await client.close() }
        await #expect(throws: ClientError.self) { try await clients[0].ping() }
    }

    /// The process's I/O thread runs on the readiness layer the environment
    /// names (`CHECKLIST_READINESS=poll` runs the client suite over poll).
    @Test func theSharedThreadRunsOnTheConfiguredReadiness() throws {
        let named = ProcessInfo.processInfo.environment[ReadinessKind.environmentVariable]
        #expect(try IOThread.shared().kind == (named.flatMap(ReadinessKind.init(rawValue:)) ?? .epoll))
    }

    /// The queue's bound, without sockets.
    @Test func theQueueRefusesWhatWouldPassItsBound() {
        var queue = OutputQueue(limit: 100)
        // A frame larger than the bound goes when nothing waits.
        #expect(queue.refusal(forBytes: 500) == nil)
        let first = queue.append([UInt8](repeating: 0, count: 500))
        #expect(first)
        #expect(queue.refusal(forBytes: 1)?.code == .sendQueueFull)
        var taken: [[UInt8]] = []
        queue.take(into: &taken)
        #expect(taken.count == 1 && queue.frames.isEmpty)
        // Taken but not written: still counted.
        #expect(queue.refusal(forBytes: 1) != nil)
        queue.wrote(500)
        #expect(queue.unwrittenBytes == 0)
        #expect(queue.refusal(forBytes: 60) == nil)
        let afterTake = queue.append([UInt8](repeating: 0, count: 60))
        let next = queue.append([UInt8](repeating: 0, count: 40))
        #expect(afterTake, "the first frame after a take asks for a flush")
        #expect(!next, "later ones do not")
        #expect(queue.refusal(forBytes: 1)?.code == .sendQueueFull)
    }
}
