#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ChecklistModel
import ChecklistSocket
import ChecklistTLS
import ChecklistWire

/// The blocking frame client of the tests, the tools and the conformance
/// runner: requests (or exactly the bytes a caller means, malformed ones
/// included) out, whole frames in. A thin policy over `FrameStream`, the
/// frame core every client shares: each call waits for the socket
/// (`FrameStream.wait`, bounded by the timeout) and then takes the same
/// non-blocking steps, so a caller never hangs: it can stay silent, read
/// exactly, or see the server close.
///
/// Plaintext by default; given a client `TLSContext`, the same frames travel
/// inside TLS. The raw-transport calls keep their meaning below TLS: a
/// half-close sends close_notify and then the FIN, a reset sends no
/// close_notify, and each `send` becomes its own record (so one-byte writes
/// stay one-byte pieces of the plaintext stream).
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

        /// The failure for a step of the stream while `doing` something.
        init(_ error: FrameStreamError, _ doing: String) {
            switch error.code {
            case .tls: self.init(.tls, "TLS failed: \(error.message)", tls: error.tls)
            case .timedOut: self.init(.timedOut, error.message)
            case .closed: self.init(.closed, error.message)
            default: self.init("\(doing) failed: \(error)")
            }
        }
    }

    /// One frame the server sent.
    public typealias Answer = (header: FrameHeader, message: ServerMessage)

    /// The connected socket (non-blocking; the calls wait for it).
    public var fd: Int32 { stream.fd }
    /// The bound of every wait (a caller may change it between calls).
    public var timeout: Duration
    /// The frame core: socket, TLS, buffers.
    let stream: FrameStream

    /// Connects to `host`:`port`; every wait for the server ends after
    /// `timeout`. With `tls` (a client context), runs the TLS handshake
    /// first; the server's certificate must name `host` (or the context's
    /// server name).
    ///
    /// - Throws: `Failure` `.tls` when the handshake fails (e.g. the
    ///   certificate does not verify), `.timedOut` when it gets no answer.
    public init(host: String = "127.0.0.1", port: UInt16, timeout: Duration = .seconds(20), tls: TLSContext? = nil) throws {
        let fd = try connectSocket(host: host, port: port)
        let target = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        do throws(FrameStreamError) {
            let session: TLSSession?
            do throws(TLSError) {
                session = try tls.map { (context) throws(TLSError) in try TLSSession(client: context, serverName: host) }
            } catch {
                throw FrameStreamError(.tls, error.message, tls: error)
            }
            // Written to completion before each call returns: never refused.
            stream = try FrameStream(fd: fd, tls: session, sendLimit: .max)
        } catch {
            closeSocket(fd)
            throw Failure(error, "connecting")
        }
        self.timeout = timeout
        guard tls != nil else { return }
        do throws(FrameStreamError) {
            try stream.handshake(deadline: .now.advanced(by: timeout))
        } catch {
            stream.close(notify: false)
            if error.code == .timedOut {
                throw Failure(.timedOut, "the TLS handshake with \(target) got no answer within \(timeout)")
            }
            let failure = Failure(error, "the TLS handshake")
            throw Failure(failure.code, TLSError.naming(target, in: failure.description), tls: failure.tls)
        }
    }

    /// The negotiated TLS version; nil for a plaintext connection.
    public var tlsVersion: TLSVersion? { stream.tls?.session.protocolVersion }

    // MARK: Sending

    /// Sends `bytes` as they are (over TLS: as one write of plaintext).
    public func send(_ bytes: [UInt8]) throws {
        do throws(FrameStreamError) {
            try stream.enqueue(bytes)
            try flushAll()
        } catch {
            throw Failure(error, "sending \(bytes.count) bytes")
        }
    }

    /// Writes everything queued, waiting for the socket up to the timeout.
    private func flushAll() throws(FrameStreamError) {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while try !stream.flush().isDone {
            try stream.wait(.writable, deadline: deadline, what: "the server took no bytes within \(timeout)")
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
        if let tls = stream.tls {
            tls.session.close()
            do throws(FrameStreamError) { try flushAll() } catch { throw Failure(error, "sending close_notify") }
        }
        do { try shutdownSocket(fd, .write) } catch { throw Failure("shutdown failed: \(error)") }
    }

    /// Closes with an RST instead of a FIN (SO_LINGER with a zero timeout);
    /// over TLS without close_notify.
    public func reset() {
        guard !stream.isClosed else { return }
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        stream.close(notify: false)
    }

    /// Closes normally (over TLS: close_notify first, if the socket takes it at once).
    public func close() {
        stream.close()
    }

    // MARK: Receiving

    /// The next frame from the server, decoded. Throws when the server
    /// closes the connection first or nothing arrives within the timeout.
    public func receive() throws -> Answer {
        while true {
            if let answer = try bufferedAnswer() { return answer }
            switch try readMore() {
            case .data: continue
            case .closed:
                if let answer = try bufferedAnswer() { return answer }
                throw Failure(.closed, "the server closed the connection before a whole frame arrived")
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
        while bufferedByteCount == 0 {
            switch try readMore() {
            case .data: continue
            case .closed: return bufferedByteCount == 0
            case .timedOut: throw Failure(.timedOut, "the server did not close the connection within \(timeout)")
            }
        }
        return false
    }

    /// Bytes received but not yet taken as answers.
    public var bufferedByteCount: Int { stream.bufferedBytes }

    /// The next whole frame among the bytes already received, or nil.
    public func bufferedAnswer() throws -> Answer? {
        let decoded: Result<Answer, ChecklistError>?
        do throws(FrameStreamError) {
            decoded = try stream.nextFrame(maxFrameBytes: .max) { header, body in
                Result { () throws(ChecklistError) in
                    (header, try ServerMessage.decode(header: header, body: body, maxFrameBytes: .max))
                }
            }
        } catch {
            throw Failure(.undecodable, "the server sent a frame that does not decode: \(error.framing.map { "\($0)" } ?? error.message)")
        }
        do {
            return try decoded?.get()
        } catch {
            throw Failure(.undecodable, "the server sent a frame that does not decode: \(error)")
        }
    }

    /// What one read brought.
    public enum ReadResult: Sendable { case data, closed, timedOut }

    /// Reads what has arrived into the buffer, waiting up to the timeout
    /// for something to arrive.
    public func readMore() throws -> ReadResult {
        try readMore(deadline: .now.advanced(by: timeout))
    }

    /// One read step, waiting until `deadline` while the socket has nothing.
    func readMore(deadline: ContinuousClock.Instant) throws -> ReadResult {
        while true {
            let step: FrameStream.ReadStep
            do throws(FrameStreamError) {
                step = try stream.readAvailable()
                // What reading made the session want to send (a KeyUpdate
                // answer), if the socket takes it.
                if stream.tls?.hasPendingOutput == true { try stream.flush() }
            } catch where error.isDisconnect {
                return .closed
            } catch {
                throw Failure(error, "reading")
            }
            switch step {
            case .bytes: return .data
            case .endOfFile: return .closed
            case .wouldBlock:
                do throws(FrameStreamError) {
                    try stream.wait(.readable, deadline: deadline, what: "")
                } catch where error.code == .timedOut {
                    return .timedOut
                } catch {
                    throw Failure(error, "waiting")
                }
            }
        }
    }
}
