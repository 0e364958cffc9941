#if canImport(Glibc)
import Glibc
#endif
import ChecklistCommandLine
import ChecklistModel
import ChecklistSocket
import ChecklistWebSocket
import ChecklistWire
import Foundation
import Synchronization

/// `checklist-bench websocket`: the same GET_PAGE traffic over TCP and over
/// the web port's WebSocket (Protocol/WEBSOCKET.md), from thin clients on
/// both sides: one thread and one blocking socket per connection, requests
/// encoded (and for WebSocket masked and framed) once before the run, answers
/// only counted by their length prefix (no decoding), `--pipeline` requests
/// in flight each. Runs TCP, WebSocket, WebSocket, TCP for half of
/// `--seconds` each; reports pages/s of each transport and their ratio.
enum WebSocketScenario {
    /// The scenario's options, for the parser and `--help`.
    static let spec = CommandSpec(
        name: "websocket", summary: "GET_PAGE over TCP and over the web port's WebSocket, thin clients both sides",
        details: "Pages a second of each and their ratio.",
        options: [
            .value("--items", "N", "items of the list paged (default 100000)"),
            .value("--connections", "N", "connections on each side (default 50)"),
            .value("--page", "N", "rows a page (default 100)"),
            .value("--seconds", "S", "seconds each side runs (default 5)"),
            .value("--pipeline", "N", "requests in flight per connection (default 1)"),
            BenchOptions.json,
        ])

    static func run(_ args: BenchArguments) async throws {
        let items = try args.int("items", default: 100_000, min: 1)
        let connections = try args.int("connections", default: 50, min: 1)
        let pageSize = try args.int("page", default: 100, min: 1)
        let seconds = try args.double("seconds", default: 5)
        let pipeline = try args.int("pipeline", default: 1, min: 1)
        let target = try BenchTarget(args, extraServerArguments: ["--web-port", "0"])
        defer { target.stop() }
        guard let stdout = target.serverProcess?.standardOutput,
              let line = stdout.split(separator: "\n").first(where: { $0.contains("web on ") }),
              let webPort = UInt16(line.split(separator: ":").last ?? "") else {
            throw BenchFailure(description: "the bench's checklistd printed no web port")
        }
        let setup = try await target.connect()
        let list = try await target.benchList(items: items, textBytes: 40, on: setup)
        await setup.close()

        // A pool of requests at spread offsets, encoded once.
        let offsets = (0..<64).map { ($0 * 7919 * pageSize) % max(1, items - pageSize) }
        let requests: [[UInt8]] = offsets.enumerated().map { n, offset in
            var w = WireWriter()
            var encoder = FrameEncoder(compress: false)
            Request.getPage(GetPage(list: list.id, start: .offset(UInt64(offset)), limit: UInt64(pageSize)))
                .encode(requestID: UInt32(n + 2), into: &w, encoder: &encoder)
            return w.bytes
        }
        var hello = WireWriter()
        var encoder = FrameEncoder(compress: false)
        Request.hello(Hello(features: [], clientName: "checklist-bench websocket")).encode(requestID: 1, into: &hello, encoder: &encoder)

        var report = BenchReport()
        report.add("scenario", "websocket")
        report.add("connections", connections)
        report.add("page", pageSize)
        report.add("pipeline", pipeline)
        // TCP, WebSocket, WebSocket, TCP, each half the time: a drift of the
        // shared machine's load during the run weighs on both alike.
        var pages = [false: 0, true: 0]
        for webSocket in [false, true, true, false] {
            let port = webSocket ? webPort : target.port
            pages[webSocket]! += try runTransport(port: port, webSocket: webSocket, connections: connections,
                                                  seconds: seconds / 2, hello: hello.bytes, requests: requests,
                                                  pipeline: pipeline)
        }
        let tcpRate = Double(pages[false]!) / seconds
        let webRate = Double(pages[true]!) / seconds
        report.add("tcpPagesPerSecond", tcpRate.rounded())
        report.add("websocketPagesPerSecond", webRate.rounded())
        report.add("websocketToTCP", (webRate / tcpRate * 100).rounded() / 100)
        report.print(json: args.flag("json"))
    }

    /// Runs `connections` thin clients for `seconds`; returns the pages answered.
    static func runTransport(port: UInt16, webSocket: Bool, connections: Int, seconds: Double,
                             hello: [UInt8], requests: [[UInt8]], pipeline: Int) throws -> Int {
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        let wire = webSocket ? requests.map { WebSocketFrameEncoder.frame(.binary, $0, mask: mask) } : requests
        let helloWire = webSocket ? WebSocketFrameEncoder.frame(.binary, hello, mask: mask) : hello
        let total = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let ready = DispatchGroup()
        for n in 0..<connections {
            ready.enter()
            Thread {
                defer { ready.leave() }
                do {
                    var client = try ThinClient(port: port, webSocket: webSocket)
                    defer { close(client.fd) }
                    try client.send(helloWire)
                    _ = try client.awaitAnswers(1)
                    var next = n
                    for _ in 0..<pipeline {
                        try client.send(wire[next % wire.count])
                        next += 1
                    }
                    var pages = 0
                    while ContinuousClock.now < deadline {
                        let answered = try client.awaitAnswers(1)
                        pages += answered
                        for _ in 0..<answered {
                            try client.send(wire[next % wire.count])
                            next += 1
                        }
                    }
                    total.wrappingAdd(pages, ordering: .relaxed)
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }.start()
        }
        ready.wait()
        if let first = failures.withLock({ $0.first }) { throw BenchFailure(description: "a client failed: \(first)") }
        return total.load(ordering: .relaxed)
    }
}

/// One blocking connection that counts whole protocol frames received,
/// unwrapping the server's WebSocket frames first on a web port.
struct ThinClient {
    struct Failure: Error, CustomStringConvertible { var description: String }

    let fd: Int32
    let webSocket: Bool
    private var raw: [UInt8] = []
    private var stream: [UInt8] = []
    private var buffer = [UInt8](repeating: 0, count: 256 << 10)

    init(port: UInt16, webSocket: Bool) throws {
        fd = try connectSocket(host: "127.0.0.1", port: port)
        self.webSocket = webSocket
        guard webSocket else { return }
        let key = Base64.encode((0..<16).map { UInt8($0) })
        try send(Array(("GET /ws HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: checklists.v1\r\n\r\n").utf8))
        while true {
            try Self.readMore(fd, &buffer, into: &raw)
            if let end = raw.indices.dropFirst(3).first(where: { raw[$0 - 3] == 13 && raw[$0 - 2] == 10 && raw[$0 - 1] == 13 && raw[$0] == 10 }) {
                guard raw.starts(with: Array("HTTP/1.1 101".utf8)) else { throw Failure(description: "upgrade refused") }
                raw.removeFirst(end + 1)
                return
            }
        }
    }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + sent, bytes.count - sent) }
            guard n > 0 else { throw Failure(description: "write failed") }
            sent += n
        }
    }

    private static func readMore(_ fd: Int32, _ buffer: inout [UInt8], into target: inout [UInt8]) throws {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
        guard n > 0 else { throw Failure(description: "the server closed the connection") }
        target.append(contentsOf: buffer[..<n])
    }

    /// Reads until at least `atLeast` whole protocol frames are in; returns how many were, consuming them.
    mutating func awaitAnswers(_ atLeast: Int) throws -> Int {
        var frames = 0
        while true {
            var at = 0
            while stream.count - at >= 4 {
                let length = Int(stream[at]) << 24 | Int(stream[at + 1]) << 16 | Int(stream[at + 2]) << 8 | Int(stream[at + 3])
                guard stream.count - at >= 4 + length else { break }
                at += 4 + length
                frames += 1
            }
            if at > 0 { stream.removeFirst(at) }
            if frames >= atLeast { return frames }
            if webSocket {
                try Self.readMore(fd, &buffer, into: &raw)
                unwrapFrames()
            } else {
                try Self.readMore(fd, &buffer, into: &stream)
            }
        }
    }

    /// Moves the payload of every whole server frame in `raw` to `stream`.
    private mutating func unwrapFrames() {
        var at = 0
        while raw.count - at >= 2 {
            let short = Int(raw[at + 1] & 0x7F)
            var header = 2
            var length = short
            if short == 126 {
                guard raw.count - at >= 4 else { break }
                length = Int(raw[at + 2]) << 8 | Int(raw[at + 3])
                header = 4
            } else if short == 127 {
                guard raw.count - at >= 10 else { break }
                length = (2..<10).reduce(0) { $0 << 8 | Int(raw[at + $1]) }
                header = 10
            }
            guard raw.count - at >= header + length else { break }
            if raw[at] & 0x0F == 0x2 { stream.append(contentsOf: raw[(at + header)..<(at + header + length)]) }
            at += header + length
        }
        if at > 0 { raw.removeFirst(at) }
    }
}
