import ChecklistModel
import ChecklistSocket
import ChecklistWire
import Foundation
import Synchronization

/// A stand-in server for one client connection, for tests of requests in
/// flight: it answers HELLO, then reads GET_PAGE frames without answering
/// until `expected` have arrived (so all of them are in flight at once),
/// answers the first `answered` of them in the order they arrived (each a
/// one-row PAGE at the offset asked for, the row's text `row <offset>`),
/// and closes the connection with the rest unanswered.
final class PipelineStubServer: Sendable {
    let port: UInt16
    private let listenFD: Int32
    /// The offsets of the GET_PAGE requests, in the order they arrived.
    let received = Mutex<[UInt64]>([])

    init(expected: Int, answered: Int) throws {
        (listenFD, port) = try makeListeningSocket(host: "127.0.0.1", port: 0)
        try setNonBlocking(listenFD, false)
        let fd = listenFD
        Thread.detachNewThread { [self] in
            guard let accepted = try? acceptConnection(fd) else { return }
            try? setNonBlocking(accepted.fd, false)
            serve(accepted.fd, expected: expected, answered: answered)
            try? shutdownSocket(accepted.fd, .both)
            closeSocket(accepted.fd)
        }
    }

    func stop() {
        try? shutdownSocket(listenFD, .both)
        closeSocket(listenFD)
    }

    private func serve(_ fd: Int32, expected: Int, answered: Int) {
        var frames = FrameReader(fd: fd)
        guard let (hello, _) = frames.next(), hello.type == .hello else { return }
        send(.helloOK(HelloOK(version: 1, features: [], serverName: "pipeline-stub", limits: Limits())), id: hello.requestID, to: fd)
        var waiting: [(id: UInt32, offset: UInt64)] = []
        while waiting.count < expected {
            guard let (header, request) = frames.next(), case .getPage(let get)? = request,
                  case .offset(let offset) = get.start else { return }
            waiting.append((header.requestID, offset))
            received.withLock { $0.append(offset) }
        }
        for (id, offset) in waiting.prefix(answered) {
            let row = Item(id: ItemID(offset + 1), fields: ItemFields(text: "row \(offset)"))
            send(.page(PageMessage(list: ListID(1), revision: 1, total: 1000, offset: offset, rows: [row])), id: id, to: fd)
        }
    }

    private func send(_ message: ServerMessage, id: UInt32, to fd: Int32) {
        var w = WireWriter()
        var encoder = FrameEncoder(compress: false)
        message.encode(requestID: id, into: &w, encoder: &encoder)
        try? writeAll(fd, w.bytes)
    }

    /// Whole request frames from a blocking socket.
    private struct FrameReader {
        let fd: Int32
        var buffer: [UInt8] = []

        mutating func next() -> (FrameHeader, Request?)? {
            while true {
                let parsed: (FrameHeader, Request?, Int)?? = buffer.withUnsafeBytes { raw in
                    switch FrameParser.next(in: raw, maxFrameBytes: Limits().maxFrameBytes) {
                    case .needMore: return .some(nil)
                    case .fatal: return .none
                    case .frame(let header, let body, let consumed):
                        let request = try? Request.decode(header: header, body: UnsafeRawBufferPointer(rebasing: raw[body]),
                                                          maxFrameBytes: Limits().maxFrameBytes)
                        return (header, request, consumed)
                    }
                }
                guard let parsed else { return nil }
                if let (header, request, consumed) = parsed {
                    buffer.removeFirst(consumed)
                    return (header, request)
                }
                var chunk = [UInt8](repeating: 0, count: 4096)
                guard case .bytes(let n)? = try? chunk.withUnsafeMutableBytes({ try readSocket(fd, into: $0) }) else { return nil }
                buffer += chunk[0..<n]
            }
        }
    }
}
