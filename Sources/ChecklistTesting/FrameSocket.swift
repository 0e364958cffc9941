import ChecklistModel
import ChecklistSocket
import ChecklistWire

/// A blocking, frame-level connection for tests: requests (or exactly the
/// bytes a test means, malformed ones included) out, whole frames in. Every
/// read is bounded by a receive timeout, so a test never hangs: it can stay
/// silent, read exactly, or see the server close.
public final class FrameSocket {
    /// What went wrong while receiving.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    public let fd: Int32
    private var buffer: [UInt8] = []
    private var encoder = FrameEncoder()

    /// Connects to 127.0.0.1:`port`; reads and writes time out after `timeout`.
    public init(port: UInt16, timeout: Duration = .seconds(20)) throws {
        fd = try connectSocket(host: "127.0.0.1", port: port)
        try setTimeouts(fd, receive: timeout, send: timeout)
    }

    deinit { closeSocket(fd) }

    /// Sends `bytes` as they are.
    public func send(bytes: [UInt8]) throws {
        try writeAll(fd, bytes)
    }

    /// Sends one request frame.
    public func send(_ request: Request, id: UInt32) throws {
        var w = WireWriter()
        request.encode(requestID: id, into: &w, encoder: &encoder)
        try send(bytes: w.bytes)
    }

    /// HELLO with request id 1, expecting HELLO_OK.
    public func handshake() throws {
        try send(.hello(Hello(clientName: "frame-socket")), id: 1)
        let (_, answer) = try receive()
        guard case .helloOK = answer else { throw Failure("expected HELLO_OK, got \(answer)") }
    }

    /// The next frame from the server, decoded. Throws when the server
    /// closes the connection first or nothing arrives within the timeout.
    public func receive() throws -> (FrameHeader, ServerMessage) {
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
            guard try readMore() else { throw Failure("the server closed the connection before a whole frame arrived") }
        }
    }

    /// The next answer, which must be an ERROR; returns it with its request id.
    public func receiveError() throws -> (requestID: UInt32, error: ChecklistError) {
        let (header, message) = try receive()
        guard case .error(let e) = message else { throw Failure("expected ERROR, got \(message)") }
        return (header.requestID, e.error)
    }

    /// True when the server closed the connection (reads end-of-file or a
    /// reset) with no further bytes.
    public func isClosedByServer() throws -> Bool {
        while true {
            do {
                if try !readMore() { return true }
            } catch let error as SocketError where error.isDisconnect {
                return true
            }
            if !buffer.isEmpty { return false }
        }
    }

    /// Reads what has arrived into the buffer; false at end of stream.
    private func readMore() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        let result = try chunk.withUnsafeMutableBytes { try readSocket(fd, into: $0) }
        switch result {
        case .bytes(let n):
            buffer.append(contentsOf: chunk[0..<n])
            return true
        case .endOfFile:
            return false
        case .wouldBlock:
            throw Failure("timed out waiting for the server")
        }
    }
}
