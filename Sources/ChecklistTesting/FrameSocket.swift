import ChecklistModel
import ChecklistSocket
import ChecklistTLS
import ChecklistWire
#if canImport(Glibc)
import Glibc
#endif

/// The one blocking, frame-level connection of the tests, tools and the
/// conformance runner: requests (or exactly the bytes a caller means,
/// malformed ones included) out, whole frames in. Every read and write is
/// bounded by the timeout, so a caller never hangs: it can stay silent, read
/// exactly, or see the server close.
///
/// Plaintext by default; given a client `TLSContext`, the same frames travel
/// inside TLS (see `FrameSocketTLS` for what the raw-transport calls mean
/// there).
public final class FrameSocket {
    /// What went wrong while talking to the server.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The kind of failure, for callers that expect one.
        public struct Code: Hashable, Sendable {
            let rawValue: UInt8
            /// The server closed (or reset) the connection before a whole frame arrived.
            public static let closed = Code(rawValue: 1)
            /// Nothing arrived within the timeout.
            public static let timedOut = Code(rawValue: 2)
            /// The server sent a frame that does not decode.
            public static let undecodable = Code(rawValue: 3)
            /// A read, write or socket option failed, or the answer was not the one expected.
            public static let other = Code(rawValue: 4)
            /// TLS failed: the handshake (a certificate that did not verify, a
            /// server that does not speak TLS) or a record; see `tls`.
            public static let tls = Code(rawValue: 5)
        }

        public let code: Code
        public var description: String
        /// The TLS failure behind a `.tls` failure, when there is one.
        public let tls: TLSError?
        /// A failure of kind `code`.
        public init(_ code: Code, _ description: String, tls: TLSError? = nil) {
            self.code = code
            self.description = description
            self.tls = tls
        }

        /// A failure of kind `other`.
        public init(_ description: String) { self.init(.other, description) }
    }

    /// One frame the server sent.
    public typealias Answer = (header: FrameHeader, message: ServerMessage)

    /// The connected socket.
    public let fd: Int32
    /// The bound of every read and write.
    public let timeout: Duration
    private var buffer: [UInt8] = []
    private var isOpen = true
    /// The TLS layer, when connected with a TLS context.
    let tls: FrameSocketTLS?

    /// Connects to `host`:`port`; reads and writes time out after `timeout`.
    /// With `tls` (a client context), runs the TLS handshake first; the
    /// server's certificate must name `host` (or the context's server name).
    ///
    /// - Throws: `Failure` `.tls` when the handshake fails (e.g. the
    ///   certificate does not verify), `.timedOut` when it gets no answer.
    public init(host: String = "127.0.0.1", port: UInt16, timeout: Duration = .seconds(20), tls: TLSContext? = nil) throws {
        let fd = try connectSocket(host: host, port: port)
        self.fd = fd
        self.timeout = timeout
        do {
            try setTimeouts(fd, receive: timeout, send: timeout)
            let target = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            self.tls = try tls.map {
                try FrameSocketTLS.handshake(fd: fd, context: $0, serverName: host, target: target, timeout: timeout)
            }
        } catch {
            closeSocket(fd)
            throw error
        }
    }

    /// The negotiated TLS version; nil for a plaintext connection.
    public var tlsVersion: TLSVersion? { tls?.protocolVersion }

    deinit { if isOpen { closeSocket(fd) } }

    // MARK: Sending

    /// Sends `bytes` as they are (over TLS: as one write of plaintext).
    public func send(_ bytes: [UInt8]) throws {
        if let tls { return try tls.send(bytes) }
        do {
            try writeAll(fd, bytes)
        } catch {
            throw Failure("sending \(bytes.count) bytes failed: \(error)")
        }
    }

    /// Sends one request frame, uncompressed.
    public func send(_ request: Request, id: UInt32) throws {
        var w = WireWriter()
        var encoder = FrameEncoder(compress: false)
        request.encode(requestID: id, into: &w, encoder: &encoder)
        try send(w.bytes)
    }

    /// Sends each byte with its own `send(2)` (TCP_NODELAY is on, so each
    /// leaves as its own segment; over TLS, each in its own record).
    public func sendOneByteAtATime(_ bytes: [UInt8]) throws {
        for byte in bytes { try send([byte]) }
    }

    /// HELLO announcing `features` (with `token` if given), expecting HELLO_OK.
    @discardableResult
    public func handshake(features: Features = [.compression], token: String? = nil, id: UInt32 = 1,
                          name: String = "frame-socket") throws -> HelloOK {
        try send(.hello(Hello(features: features, clientName: name, token: token)), id: id)
        let answer = try receive()
        guard answer.header.requestID == id, case .helloOK(let ok) = answer.message else {
            throw Failure("expected HELLO_OK for request \(id), got \(answer.message) (request \(answer.header.requestID))")
        }
        return ok
    }

    // MARK: Closing

    /// Half-closes: the server reads end-of-file (over TLS: close_notify,
    /// then the FIN).
    public func shutdownSending() throws {
        try tls?.sendCloseNotify()
        do { try shutdownSocket(fd, .write) } catch { throw Failure("shutdown failed: \(error)") }
    }

    /// Closes with an RST instead of a FIN (SO_LINGER with a zero timeout);
    /// over TLS without close_notify.
    public func reset() {
        guard isOpen else { return }
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        closeSocket(fd)
        isOpen = false
    }

    /// Closes normally (over TLS: close_notify first, if the socket takes it at once).
    public func close() {
        guard isOpen else { return }
        tls?.closeNotify()
        closeSocket(fd)
        isOpen = false
    }

    // MARK: Receiving

    /// The next frame from the server, decoded. Throws when the server
    /// closes the connection first or nothing arrives within the timeout.
    public func receive() throws -> Answer {
        while true {
            if let answer = try bufferedAnswer() { return answer }
            switch try readMore() {
            case .data: continue
            case .closed: throw Failure(.closed, "the server closed the connection before a whole frame arrived")
            case .timedOut: throw Failure(.timedOut, "no answer within \(timeout)")
            }
        }
    }

    /// The next answer, which must be an ERROR; returns it with its request id.
    public func receiveError() throws -> (requestID: UInt32, error: ChecklistError) {
        let (header, message) = try receive()
        guard case .error(let e) = message else { throw Failure("expected ERROR, got \(message)") }
        return (header.requestID, e.error)
    }

    /// True when the server closed the connection (reads end-of-file or a
    /// reset) with no further bytes; false when bytes arrive first.
    public func isClosedByServer() throws -> Bool {
        while buffer.isEmpty {
            switch try readMore() {
            case .data: continue
            case .closed: return true
            case .timedOut: throw Failure(.timedOut, "the server did not close the connection within \(timeout)")
            }
        }
        return false
    }

    /// Bytes received but not yet taken as answers.
    public var bufferedByteCount: Int { buffer.count }

    /// The next whole frame among the bytes already received, or nil.
    public func bufferedAnswer() throws -> Answer? {
        let parsed = buffer.withUnsafeBytes { raw -> Result<(Answer, Int)?, ChecklistError> in
            switch FrameParser.next(in: raw, maxFrameBytes: .max) {
            case .needMore: return .success(nil)
            case .fatal(let e): return .failure(e)
            case let .frame(header, body, consumed):
                return Result { () throws(ChecklistError) in
                    let message = try ServerMessage.decode(header: header, body: UnsafeRawBufferPointer(rebasing: raw[body]),
                                                           maxFrameBytes: .max)
                    return ((header, message), consumed)
                }
            }
        }
        do {
            guard let (answer, consumed) = try parsed.get() else { return nil }
            buffer.removeFirst(consumed)
            return answer
        } catch {
            throw Failure(.undecodable, "the server sent a frame that does not decode: \(error)")
        }
    }

    /// What one read brought.
    public enum ReadResult: Sendable { case data, closed, timedOut }

    /// Reads what has arrived into the buffer (waiting up to the timeout).
    public func readMore() throws -> ReadResult {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        if let tls {
            let result = try chunk.withUnsafeMutableBytes { try tls.read(into: $0) }
            // What reading made the session want to send (a KeyUpdate answer), if the socket takes it.
            if tls.hasPendingOutput { try? tls.writePendingWithoutWaiting() }
            switch result {
            case .bytes(let n):
                buffer.append(contentsOf: chunk[0..<n])
                // Take every record already received, so that a caller that
                // polls the socket next (`pump`) never waits for bytes that
                // are in the session already.
                while let more = try chunk.withUnsafeMutableBytes({ try tls.readBuffered(into: $0) }) {
                    buffer.append(contentsOf: chunk[0..<more])
                }
                return .data
            case .closed: return .closed
            case .wouldBlock: return .timedOut
            }
        }
        let result: SocketReadResult
        do {
            result = try chunk.withUnsafeMutableBytes { (raw) throws(SocketError) in try readSocket(fd, into: raw) }
        } catch let error as SocketError where error.isDisconnect {
            return .closed
        } catch {
            throw Failure("reading failed: \(error)")
        }
        switch result {
        case .bytes(let n):
            buffer.append(contentsOf: chunk[0..<n])
            return .data
        case .endOfFile:
            return .closed
        case .wouldBlock:
            return .timedOut
        }
    }
}
