import ChecklistModel
import ChecklistSocket
import ChecklistWire
#if canImport(Glibc)
import Glibc
#endif

/// A blocking, byte-level connection for tests that must send exactly the
/// bytes they mean, malformed ones included. Every read is bounded by a
/// receive timeout, so a test never hangs.
final class RawConnection {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var encoder = FrameEncoder()

    init(port: UInt16, timeout: Duration = .seconds(10)) throws {
        fd = try connectSocket(host: "127.0.0.1", port: port)
        try setTimeouts(fd, receive: timeout, send: timeout)
    }

    deinit { closeSocket(fd) }

    func send(bytes: [UInt8]) throws {
        try writeAll(fd, bytes)
    }

    func send(_ request: Request, id: UInt32) throws {
        var w = WireWriter()
        request.encode(requestID: id, into: &w, encoder: &encoder)
        try send(bytes: w.bytes)
    }

    /// Sends HELLO and checks the answer is HELLO_OK.
    func handshake() throws {
        try send(.hello(Hello(clientName: "raw-test")), id: 1)
        let (_, answer) = try receive()
        guard case .helloOK = answer else { throw TestFailure("expected HELLO_OK, got \(answer)") }
    }

    /// The next frame from the server, decoded.
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
            guard try readMore() else { throw TestFailure("connection closed before a whole frame arrived") }
        }
    }

    /// The next answer, which must be an ERROR; returns it with its request id.
    func receiveError() throws -> (requestID: UInt32, error: ChecklistError) {
        let (header, message) = try receive()
        guard case .error(let e) = message else { throw TestFailure("expected ERROR, got \(message)") }
        return (header.requestID, e.error)
    }

    /// True when the server closed the connection (reads end-of-file or a
    /// reset) with no further bytes.
    func isClosedByServer() throws -> Bool {
        while true {
            do {
                if try !readMore() { return true }
            } catch let error as SocketError where error.isDisconnect {
                return true
            }
            if !buffer.isEmpty { return false }
        }
    }

    private func readMore() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let result = try chunk.withUnsafeMutableBytes { try readSocket(fd, into: $0) }
        switch result {
        case .bytes(let n):
            buffer.append(contentsOf: chunk[0..<n])
            return true
        case .endOfFile:
            return false
        case .wouldBlock:
            throw TestFailure("timed out waiting for the server")
        }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
