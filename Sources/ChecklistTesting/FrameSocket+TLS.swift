import ChecklistSocket
import ChecklistTLS

/// A `FrameSocket`'s TLS layer: a client `TLSSession` over the socket,
/// through ChecklistTLS's `TLSSocketStream` (the path every TLS client of
/// the project shares), with the blocking waits a `FrameSocket` needs
/// (bounded by the socket's timeouts; or none, for `pump`). Owned by one
/// `FrameSocket` and used from its caller's thread only, like the socket.
///
/// The raw-transport operations keep their meaning below TLS: a half-close
/// sends close_notify and then the FIN, a reset sends no close_notify, and
/// each `send` becomes its own record (so one-byte writes stay one-byte
/// pieces of the plaintext stream).
final class FrameSocketTLS {
    private let stream: TLSSocketStream
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: TLSSocketStream.recordBytes, alignment: 16)

    private init(stream: TLSSocketStream) {
        self.stream = stream
    }

    deinit { scratch.deallocate() }

    /// The negotiated version.
    var protocolVersion: TLSVersion? { stream.session.protocolVersion }
    /// The verified subject of the server's certificate.
    var peerCertificateSubject: String? { stream.session.peerCertificateSubject }

    /// Runs the client handshake on the connected blocking socket `fd`,
    /// verifying that the server's certificate names `serverName`; failures
    /// name `target` (HOST:PORT).
    static func handshake(fd: Int32, context: TLSContext, serverName: String, target: String,
                          timeout: Duration) throws -> FrameSocketTLS {
        let session = try mapped { () throws(TLSError) in try TLSSession(client: context, serverName: serverName) }
        let tls = FrameSocketTLS(stream: TLSSocketStream(fd: fd, session: session))
        do {
            while true {
                let progress = try mapped { () throws(TLSError) in try session.handshake() }
                try tls.sendPending()
                switch progress {
                case .complete: return tls
                case .wantsOutputTaken: continue
                case .wantsInput:
                    // `.endOfFile`: the session now fails with `.truncated`.
                    if try tls.receive() == .wouldBlock {
                        throw FrameSocket.Failure(.timedOut, "the TLS handshake with \(target) got no answer within \(timeout)")
                    }
                }
            }
        } catch let failure as FrameSocket.Failure {
            tls.stream.writePendingWithoutWaiting()  // the alert that says why, if any
            guard failure.code != .timedOut else { throw failure }
            throw FrameSocket.Failure(failure.code, TLSError.naming(target, in: failure.description), tls: failure.tls)
        }
    }

    // MARK: Sending

    /// Encrypts all of `bytes` and writes it to the blocking socket.
    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            offset += try bytes.withUnsafeBytes { raw in try encrypt(UnsafeRawBufferPointer(rebasing: raw[offset...])) }
            try sendPending()
        }
    }

    /// Encrypts as much of `bytes` as the session takes now; the
    /// ciphertext waits in the stream. Returns the plaintext bytes taken.
    func encrypt(_ bytes: UnsafeRawBufferPointer) throws -> Int {
        try Self.mapped { () throws(TLSError) in try stream.encrypt(bytes) }
    }

    /// Whether ciphertext is waiting for the socket.
    var hasPendingOutput: Bool { stream.hasPendingOutput }

    /// Writes what is pending to the blocking socket.
    func sendPending() throws {
        do {
            try stream.writeAllPending()
        } catch {
            throw FrameSocket.Failure("sending failed: \(error)")
        }
    }

    /// Writes what the non-blocking socket takes of what is pending.
    func writePendingWithoutWaiting() throws {
        do {
            try stream.writePending()
        } catch {
            throw FrameSocket.Failure("sending failed: \(error)")
        }
    }

    /// Queues close_notify and sends it (and anything before it) if the
    /// socket takes it at once: closing never waits.
    func closeNotify() {
        stream.closeNotify()
    }

    /// Queues close_notify and writes it to the blocking socket.
    func sendCloseNotify() throws {
        stream.session.close()
        try sendPending()
    }

    // MARK: Receiving

    /// What `read` got.
    enum ReadResult { case bytes(Int), closed, wouldBlock }

    /// Plaintext into `buffer`, reading the socket as needed: `.closed` at
    /// close_notify, at the end of the stream, or at a reset; `.wouldBlock`
    /// when the socket had nothing (its timeout passed, or it is non-blocking).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> ReadResult {
        let result: SocketReadResult
        do throws(TLSSocketStream.Failure) {
            result = try stream.read(into: buffer, scratch: scratch)
        } catch {
            throw Self.failure(error)
        }
        switch result {
        case .bytes(let n): return .bytes(n)
        case .endOfFile: return .closed
        case .wouldBlock: return .wouldBlock
        }
    }

    /// Plaintext the session can give without reading the socket (from
    /// records already received), or nil. A poller calls it until nil after
    /// `read`: records that arrived together wait in the session, where
    /// `poll(2)` cannot see them.
    func readBuffered(into buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        guard case .bytes(let n) = try Self.mapped({ () throws(TLSError) in try stream.readPlaintext(into: buffer) }) else {
            return nil  // more input needed, or the end (the next `read` reports it)
        }
        return n
    }

    /// One socket read, fed to the session (a reset counts as the end).
    private func receive() throws -> TLSSocketStream.Received {
        do throws(TLSSocketStream.Failure) {
            return try stream.receive(using: scratch)
        } catch {
            throw Self.failure(error)
        }
    }

    private static func failure(_ error: TLSSocketStream.Failure) -> FrameSocket.Failure {
        switch error {
        case .socket(let error): return FrameSocket.Failure("reading failed: \(error)")
        case .tls(let error): return FrameSocket.Failure(.tls, "TLS failed: \(error.message)", tls: error)
        }
    }

    /// Runs `body`, turning a `TLSError` into a `FrameSocket.Failure` of kind `.tls`.
    static func mapped<T>(_ body: () throws(TLSError) -> T) throws -> T {
        do throws(TLSError) {
            return try body()
        } catch {
            throw FrameSocket.Failure(.tls, error.message, tls: error)
        }
    }
}
