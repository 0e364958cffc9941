import ChecklistSocket
@testable import ChecklistEventLoop
import ChecklistThreads
import Glibc
import Synchronization
import Testing

/// What the test line server does, fixed per test.
struct LineServerConfig: Sendable {
    /// Bytes of 'x' (plus "\n") answered to `FLOOD`.
    var floodBytes = 2 << 20
    /// Bytes of 'b' (plus "\n") answered to `BIG`.
    var bigBytes = 100 << 10
    /// Stop consuming input while output is backlogged.
    var respectBackpressure = true
    /// Stop consuming when one more `BIG` answer would push pending output past this.
    var outputBudget: Int?
    /// Overrides `SocketConnection.maxInputBytes`.
    var maxInputBytes: Int?
}

/// Observations shared between the loops and the test thread.
final class ServerEvents: Sendable {
    let closed: Latch
    /// Counted down when a connection begins awaiting an answer (`LATER`).
    let awaiting = Latch(count: 1)
    private let state = Mutex(State())
    struct State {
        var opened: [UInt64] = []
        var loopOf: [UInt64: Int] = [:]
        var peerOf: [UInt64: String] = [:]
        var closed: [UInt64] = []
        var subscribers: [SocketConnectionHandle] = []
        /// Connections awaiting the answer to a `LATER`, oldest first.
        var later: [SocketConnectionHandle] = []
        var wrongThread = 0
    }

    init(expectedCloses: Int = 1) { closed = Latch(count: expectedCloses) }

    func opened(_ connection: SocketConnection) {
        state.withLock {
            $0.opened.append(connection.id)
            $0.loopOf[connection.id] = connection.eventLoop.index
            $0.peerOf[connection.id] = connection.peer
        }
    }
    func didClose(_ id: UInt64) {
        state.withLock { $0.closed.append(id) }
        closed.countDown()
    }
    func subscribe(_ handle: SocketConnectionHandle) { state.withLock { $0.subscribers.append(handle) } }
    func awaitingAnswer(_ handle: SocketConnectionHandle) {
        state.withLock { $0.later.append(handle) }
        awaiting.countDown()
    }

    /// Answers the oldest `LATER`, from the calling thread (as a worker
    /// would): "LATE" on its loop, then the connection reads again.
    func answerLater() {
        let handle = state.withLock { $0.later.removeFirst() }
        handle.execute { connection in
            connection.write(Array("LATE\n".utf8))
            connection.endAwaitingAnswer()
        }
    }
    func wrongThread() { state.withLock { $0.wrongThread += 1 } }
    var snapshot: State { state.withLock { $0 } }
}

/// A line protocol: each "\n"-terminated line is echoed, except the commands
/// FLOOD, BIG, TAKE (two answers through `write(taking:)`), SUB, LATER (answered "LATE" by `ServerEvents.answerLater`, as
/// if made off the loop; lines after it wait) and CLOSE. Runs on the
/// connection's loop only.
final class LineHandler: SocketConnectionHandler {
    let config: LineServerConfig
    let events: ServerEvents

    init(config: LineServerConfig, events: ServerEvents) {
        self.config = config
        self.events = events
    }

    private func check(_ connection: SocketConnection) {
        if !connection.eventLoop.inEventLoop { events.wrongThread() }
    }

    func connectionActive(_ connection: SocketConnection) {
        check(connection)
        if let max = config.maxInputBytes { connection.maxInputBytes = max }
        events.opened(connection)
        if connection.isOverConnectionLimit { connection.write(Array("FULL\n".utf8)) }
    }

    func connectionReadable(_ connection: SocketConnection, _ input: UnsafeRawBufferPointer) -> Int {
        check(connection)
        var consumed = 0
        while consumed < input.count {
            if config.respectBackpressure && connection.isOutputBacklogged { break }
            if let budget = config.outputBudget, connection.pendingOutputBytes + config.bigBytes > budget { break }
            guard let newline = firstNewline(in: input, from: consumed) else { break }
            let line = UnsafeRawBufferPointer(rebasing: input[consumed..<newline])
            consumed = newline + 1
            switch String(decoding: line, as: UTF8.self) {
            case "FLOOD":
                connection.write(payload("x", config.floodBytes))
            case "BIG":
                // Through withOutputBuffer, to exercise it.
                let big = payload("b", config.bigBytes)
                connection.withOutputBuffer { $0.append(contentsOf: big) }
            case "TAKE":
                // Two batches through write(taking:): the first is taken
                // (nothing pending), the second copied behind it; each
                // comes back empty.
                var batch = Array("TAKEN 1\n".utf8)
                connection.write(taking: &batch)
                let handedBack = batch.isEmpty
                batch.append(contentsOf: "TAKEN 2\n".utf8)
                connection.write(taking: &batch)
                connection.write(Array("EMPTY \(handedBack && batch.isEmpty)\n".utf8))
            case "SUB":
                events.subscribe(connection.handle)
                connection.write(Array("OK\n".utf8))
            case "LATER":
                connection.beginAwaitingAnswer()
                events.awaitingAnswer(connection.handle)
                return consumed
            case "CLOSE":
                connection.write(Array("BYE\n".utf8))
                connection.close()
                return consumed
            default:
                connection.write(line)
                connection.write([UInt8(ascii: "\n")])
            }
        }
        return consumed
    }

    func connectionShuttingDown(_ connection: SocketConnection) {
        check(connection)
        connection.write(Array("SHUTDOWN\n".utf8))
    }

    func connectionClosed(_ connection: SocketConnection) {
        check(connection)
        events.didClose(connection.id)
    }
}

/// `count` copies of `character` and a newline; cached (debug builds are slow
/// at building big arrays byte by byte).
func payload(_ character: Character, _ count: Int) -> [UInt8] {
    payloadCache.withLock { cache in
        let key = "\(character)\(count)"
        if let cached = cache[key] { return cached }
        var bytes = [UInt8](repeating: character.asciiValue!, count: count + 1)
        bytes[count] = UInt8(ascii: "\n")
        cache[key] = bytes
        return bytes
    }
}
private let payloadCache = Mutex<[String: [UInt8]]>([:])

/// Index of the first "\n" in `bytes` at or after `start` (memchr: fast in debug builds too).
func firstNewline(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
    guard start < bytes.count, let base = bytes.baseAddress,
          let found = memchr(base + start, 0x0A, bytes.count - start) else { return nil }
    return UnsafeRawPointer(found) - base
}

/// Starts a group and a line server on 127.0.0.1:0, runs `body`, and always
/// shuts both down.
func withLineServer<R>(
    threads: Int = 2, limits: ConnectionLimits = ConnectionLimits(), config: LineServerConfig = LineServerConfig(),
    events: ServerEvents = ServerEvents(), _ body: (TCPServer, ServerEvents) throws -> R
) throws -> R {
    let group = try EventLoopGroup(threads: threads)
    group.start()
    defer { group.shutdownAndJoin() }
    let server = try TCPServer(host: "127.0.0.1", port: 0, group: group, limits: limits) { _ in
        LineHandler(config: config, events: events)
    }
    defer { server.shutdown(timeout: .seconds(5)) }
    let result = try body(server, events)
    #expect(events.snapshot.wrongThread == 0)
    return result
}

/// A blocking test client with 10 s socket timeouts, so no test can hang.
final class TestClient {
    private(set) var fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0

    init(port: UInt16, timeout: Duration = .seconds(10)) throws {
        fd = try connectSocket(host: "127.0.0.1", port: port)
        try setTimeouts(fd, receive: timeout, send: timeout)
    }

    deinit { close() }

    /// Closes the socket (once).
    func close() {
        if fd >= 0 { closeSocket(fd) }
        fd = -1
    }

    func send(_ text: String) throws { try writeAll(fd, Array(text.utf8)) }
    func send(_ bytes: [UInt8]) throws { try writeAll(fd, bytes) }

    /// The next line without its "\n"; nil at end-of-file.
    func readLine() throws -> String? {
        while true {
            if let newline = buffer.withUnsafeBytes({ firstNewline(in: $0, from: start) }) {
                let line = String(decoding: buffer[start..<newline], as: UTF8.self)
                start = newline + 1
                if start > 1 << 16 {
                    buffer.removeFirst(start)
                    start = 0
                }
                return line
            }
            guard try fill() else { return nil }
        }
    }

    /// Reads until end-of-file (or a reset); returns the bytes that came first.
    func readToEnd() throws -> [UInt8] {
        do {
            while try fill() {}
        } catch let error as SocketError where error.isDisconnect {}
        defer { buffer = []; start = 0 }
        return Array(buffer[start...])
    }

    /// Reads more into the buffer; false at end-of-file.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let result = try chunk.withUnsafeMutableBytes { try readSocket(fd, into: $0) }
        switch result {
        case .bytes(let n):
            buffer.append(contentsOf: chunk[..<n])
            return true
        case .endOfFile:
            return false
        case .wouldBlock:
            throw SocketError(code: EAGAIN, operation: "test read timed out")
        }
    }
}

/// Runs `body(i)` on `count` threads at once and waits for all of them.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let threads = (0..<count).map { i in NativeThread.spawn(name: "test-\(i)") { body(i) } }
    for thread in threads { thread.join() }
}

/// Waits until every loop of `group` has run a task queued now, i.e. has
/// finished the iteration it was in. False after 10 s.
func barrier(_ group: EventLoopGroup) -> Bool {
    let passed = Latch(count: group.loops.count)
    for loop in group.loops { loop.execute { passed.countDown() } }
    return passed.wait(seconds: 10)
}

extension Latch {
    /// Waits up to `seconds`.
    func wait(seconds: Int) -> Bool { wait(until: .now + .seconds(seconds)) }
}
