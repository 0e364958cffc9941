import ChecklistClient
import ChecklistIO
import ChecklistSocket
import ChecklistTesting
import Foundation
import Synchronization

/// Lists for load tests: `count` lists of `items` rows "item 0", "item 1",
/// ... (item ids 1, 2, ... in that order), made with one connection.
func makeLoadLists(on server: TestServer, count: Int, items: Int) async throws -> [ListID] {
    let setup = try await server.connect(name: "load-setup")
    var lists: [ListID] = []
    for k in 0..<count {
        let list = try await setup.createList(name: "load \(k)")
        var next = 0
        while next < items {
            let n = min(1000, items - next)
            _ = try await setup.patch(list.id, ops: (next..<next + n).map {
                .insert(tempRef: nil, position: .end, fields: ItemFields(text: "item \($0)"))
            })
            next += n
        }
        lists.append(list.id)
    }
    await setup.close()
    return lists
}

/// One list of `items` rows of `textBytes` bytes each ("item N" padded with
/// "x"): 1000-row pages of it are `items * textBytes` bytes and more, so a
/// few requests make many megabytes of answers.
func makeWideList(on server: TestServer, items: Int = 1000, textBytes: Int = 100) async throws -> ListID {
    let setup = try await server.connect(name: "wide-setup")
    let list = try await setup.createList(name: "wide")
    _ = try await setup.patch(list.id, ops: (0..<items).map { i in
        let text = "item \(i)"
        return .insert(tempRef: nil, position: .end,
                       fields: ItemFields(text: text + String(repeating: "x", count: max(0, textBytes - text.utf8.count))))
    })
    await setup.close()
    return list.id
}

/// The figures of a server, read on a connection of their own.
func serverStats(_ server: TestServer) async throws -> StatsReport {
    let connection = try await server.connect(name: "stats")
    defer { Task { await connection.close() } }
    return try await connection.stats()
}

/// A command (e.g. `checklist-bench load`) running while the test goes on;
/// its waits run on threads of their own, not on the test's concurrency pool.
final class BackgroundCommand: Sendable {
    private let command: RunningCommand
    private let deadline: ContinuousClock.Instant

    init(_ name: String, _ arguments: [String], timeout: Duration = .seconds(90)) throws {
        command = try RunningCommand(executable: try ProductLocator.path(of: name), arguments: arguments)
        deadline = .now + timeout
    }

    /// Waits until the command writes `text` on stderr (its readiness line).
    func waitForStandardError(containing text: String) async throws -> Bool {
        let (command, deadline) = (self.command, self.deadline)
        return try await BlockingWork.run { command.waitForStandardError(containing: text, timeout: deadline - .now) }
    }

    /// Waits for the command to end (within its timeout) and returns how it ended.
    func wait() async throws -> ProcessRunner.Result {
        let (command, deadline) = (self.command, self.deadline)
        return try await BlockingWork.run { try command.finish(timeout: deadline - .now) }
    }
}

/// The one JSON object `checklist-bench ... --json` prints.
func benchJSON(_ output: ProcessRunner.Result) throws -> [String: Any] {
    guard output.status == 0 else {
        throw TestFailure("checklist-bench exited \(output.status): \(output.stderr)")
    }
    guard let line = output.stdout.split(separator: "\n").last,
          let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
        throw TestFailure("no JSON object in: \(output.stdout)")
    }
    return object
}

extension RawConnection {
    /// One read of raw bytes past the frame layer, once the socket is
    /// readable (waiting up to the timeout): `.wouldBlock` means nothing
    /// arrived in time.
    func readRaw(into buffer: UnsafeMutableRawBufferPointer) throws -> SocketReadResult {
        while true {
            guard try waitForSocket(fd, .readable, deadline: .now.advanced(by: timeout)) != nil else { return .wouldBlock }
            let result = try readSocket(fd, into: buffer)
            if result != .wouldBlock { return result }
        }
    }

    /// True when the next read is a clean end of stream (FIN), false when
    /// bytes arrive first; a reset (ECONNRESET) throws.
    func readsCleanEndOfStream() throws -> Bool {
        var byte: UInt8 = 0
        let result = try withUnsafeMutableBytes(of: &byte) { try readRaw(into: $0) }
        switch result {
        case .endOfFile: return true
        case .bytes: return false
        case .wouldBlock: throw TestFailure("timed out waiting for the end of the stream")
        }
    }

    /// Reads and discards until the server's close shows: end of stream or
    /// a reset (true). A receive timeout throws.
    func drainsToClose() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let result: SocketReadResult
            do {
                result = try chunk.withUnsafeMutableBytes { try readRaw(into: $0) }
            } catch let error as SocketError where error.isDisconnect {
                return true
            }
            switch result {
            case .bytes: continue
            case .endOfFile: return true
            case .wouldBlock: throw TestFailure("timed out waiting for the server to close")
            }
        }
    }

    /// HELLO without the COMPRESSION feature, so that answers keep their
    /// full size on the wire; expects HELLO_OK.
    func plainHandshake() throws {
        try send(.hello(Hello(features: [], clientName: "raw-test")), id: 1)
        guard case .helloOK = try receive().1 else { throw TestFailure("expected HELLO_OK") }
    }

    /// Reads `count` answers that must be PAGEs to the requests `firstID`,
    /// `firstID + 1`, ... with `rows` rows each, checking only their headers
    /// (cheap for megabytes of pages). Returns what did not match.
    func receivePageHeaders(count: Int, firstID: UInt32, rows: Int) throws -> [String] {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 256 << 10)
        var wrong: [String] = []
        var expected = firstID
        while expected < firstID + UInt32(count) {
            let parsed = buffer.withUnsafeBytes { raw -> (FrameHeader, Int, Int)? in
                guard case let .frame(header, body, consumed) = FrameParser.next(in: raw, maxFrameBytes: .max) else { return nil }
                let rowCount = (try? FrameBody.withMessageBytes(header: header, body: UnsafeRawBufferPointer(rebasing: raw[body]),
                                                                maxFrameBytes: .max) { (r) throws(ChecklistError) in
                    try PageHeader.decode(from: &r).count
                }) ?? -1
                return (header, rowCount, consumed)
            }
            if let (header, rowCount, consumed) = parsed {
                if header.requestID != expected || header.type != .page || rowCount != rows {
                    wrong.append("answer \(header.requestID) (\(header.type.name), \(rowCount) rows) for request \(expected)")
                }
                expected += 1
                buffer.removeFirst(consumed)
                continue
            }
            let result = try chunk.withUnsafeMutableBytes { try readRaw(into: $0) }
            switch result {
            case .bytes(let n): buffer += chunk[..<n]
            case .endOfFile: throw TestFailure("the server closed after \(expected - firstID) answers")
            case .wouldBlock: throw TestFailure("timed out after \(expected - firstID) answers")
            }
        }
        return wrong
    }

    /// Sends our FIN, so a server lingering after its own close finishes at once.
    func finish() {
        try? shutdownSocket(fd, .write)
    }
}

/// STATS on a raw connection of its own, for code on a plain thread.
func rawStats(port: UInt16) throws -> StatsReport {
    let raw = try RawConnection(port: port)
    defer { raw.finish() }
    try raw.handshake()
    try raw.send(.stats(Stats()), id: 2)
    guard case .statsReport(let report) = try raw.receive().1 else { throw TestFailure("expected STATS_REPORT") }
    return report
}

