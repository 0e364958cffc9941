import ChecklistModel
import ChecklistSocket
import ChecklistWire

/// A blocking frame-level client for tests: whole requests out, whole
/// frames in, every read bounded by a receive timeout (20 s), so a test
/// can stay silent, read exactly, or see the server close.
public final class FrameSocket {
    /// What went wrong while receiving.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to 127.0.0.1:`port`.
    public init(port: UInt16) throws {
        fd = try connectSocket(host: "127.0.0.1", port: port)
        try setTimeouts(fd, receive: .seconds(20), send: .seconds(20))
    }

    deinit { closeSocket(fd) }

    /// Sends one request frame.
    public func send(_ request: Request, id: UInt32) throws {
        var w = WireWriter()
        var encoder = FrameEncoder()
        request.encode(requestID: id, into: &w, encoder: &encoder)
        try writeAll(fd, w.bytes)
    }

    /// HELLO with request id 1, expecting HELLO_OK.
    public func handshake() throws {
        try send(.hello(Hello(clientName: "frame-socket")), id: 1)
        guard case .helloOK = try receive().1 else { throw Failure(description: "no HELLO_OK") }
    }

    /// The next frame from the server. Throws when the server closes the
    /// connection or nothing arrives within the timeout.
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
            var chunk = [UInt8](repeating: 0, count: 64 << 10)
            let result = try chunk.withUnsafeMutableBytes { try readSocket(fd, into: $0) }
            switch result {
            case .bytes(let n): buffer.append(contentsOf: chunk[0..<n])
            case .endOfFile: throw Failure(description: "the server closed the connection")
            case .wouldBlock: throw Failure(description: "timed out waiting for the server")
            }
        }
    }
}
