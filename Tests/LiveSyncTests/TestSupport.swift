import ChecklistClient
@testable import ChecklistServer
import ChecklistSocket
import ChecklistStore
import Glibc

/// A `ChecklistServer` in this process on 127.0.0.1 port 0, its store's
/// commits fanned out to a `SubscriptionHub` exactly as `checklistd` wires it.
final class InProcessServer: Sendable {
    let hub: SubscriptionHub
    let store: Store
    let server: ChecklistServer

    init(liveSync: LiveSyncConfiguration = LiveSyncConfiguration(), threads: Int = 2) throws {
        hub = SubscriptionHub(configuration: liveSync)
        let fanout = CommitFanout()
        store = Store(onCommitGroup: fanout.onCommitGroup)
        fanout.addEach(hub.publish)
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.threads = threads
        configuration.logLevel = .error
        configuration.liveSync = liveSync
        server = try ChecklistServer(configuration: configuration, store: store, liveSync: hub)
    }

    func connect() async throws -> ChecklistConnection {
        try await ChecklistConnection.connect(host: "127.0.0.1", port: server.port, clientName: "live-sync-test")
    }

    func stop() { server.shutdown(timeout: .seconds(5)) }
}

/// A blocking frame-level client whose reads are bounded by a receive
/// timeout, for a subscriber that must not read (or read exactly).
final class FrameSocket {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: UInt16) throws {
        fd = try connectSocket(host: "127.0.0.1", port: port)
        try setTimeouts(fd, receive: .seconds(20), send: .seconds(20))
    }

    deinit { closeSocket(fd) }

    func send(_ request: Request, id: UInt32) throws {
        var w = WireWriter()
        var encoder = FrameEncoder()
        request.encode(requestID: id, into: &w, encoder: &encoder)
        try writeAll(fd, w.bytes)
    }

    func handshake() throws {
        try send(.hello(Hello(clientName: "frame-socket")), id: 1)
        guard case .helloOK = try receive().1 else { throw TestFailure("no HELLO_OK") }
    }

    func receive() throws -> (FrameHeader, ServerMessage) {
        while true {
            let parsed = buffer.withUnsafeBytes { raw -> Result<(FrameHeader, ServerMessage, Int)?, ChecklistError> in
                switch FrameParser.next(in: raw, maxFrameBytes: .max) {
                case .needMore: return .success(nil)
                case .fatal(let e): return .failure(e)
                case let .frame(header, body, consumed):
                    return Result { () throws(ChecklistError) in
                        (header, try ServerMessage.decode(header: header, body: UnsafeRawBufferPointer(rebasing: raw[body]),
                                                          maxFrameBytes: .max), consumed)
                    }
                }
            }
            if let (header, message, consumed) = try parsed.get() {
                buffer.removeFirst(consumed)
                return (header, message)
            }
            var chunk = [UInt8](repeating: 0, count: 64 << 10)
            let result = try chunk.withUnsafeMutableBytes { try readSocket(fd, into: $0) }
            switch result {
            case .bytes(let n): buffer.append(contentsOf: chunk[0..<n])
            case .endOfFile: throw TestFailure("the server closed the connection")
            case .wouldBlock: throw TestFailure("timed out waiting for the server")
            }
        }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// `count` SET_TEXT operations of `textBytes` bytes on item 1.
func textOps(_ count: Int, textBytes: Int, tag: Int) -> [PatchOperation] {
    (0..<count).map { i in .setText(.id(ItemID(1)), String(repeating: "x", count: max(0, textBytes - 12)) + "-\(tag)-\(i)") }
}
