import ChecklistSocket
import ChecklistTLS
#if canImport(Glibc)
import Glibc
#endif

/// A `FrameSocket`'s TLS layer: a client `TLSSession` over the socket, with
/// the socket calls it needs (blocking, bounded by the socket's timeouts;
/// or non-blocking for `pump`). Owned by one `FrameSocket` and used from
/// its caller's thread only, like the socket itself.
///
/// The raw-transport operations keep their meaning below TLS: a half-close
/// sends close_notify and then the FIN, a reset sends no close_notify, and
/// each `send` becomes its own record (so one-byte writes stay one-byte
/// pieces of the plaintext stream).
final class FrameSocketTLS {
    private let session: TLSSession
    /// Ciphertext made by the session and not yet written to the socket.
    private var pending: [UInt8] = []
    private var readBuffer = [UInt8](repeating: 0, count: (16 << 10) + 512)

    private init(session: TLSSession) {
        self.session = session
    }

    /// The negotiated version.
    var protocolVersion: TLSVersion? { session.protocolVersion }
    /// The verified subject of the server's certificate.
    var peerCertificateSubject: String? { session.peerCertificateSubject }

    /// Runs the client handshake on the connected blocking socket `fd`,
    /// verifying that the server's certificate names `serverName`; failures
    /// name `target` (HOST:PORT).
    static func handshake(fd: Int32, context: TLSContext, serverName: String, target: String,
                          timeout: Duration) throws -> FrameSocketTLS {
        let tls = FrameSocketTLS(session: try mapped { () throws(TLSError) in try TLSSession(client: context, serverName: serverName) })
        do {
            while true {
                let progress = try mapped { () throws(TLSError) in try tls.session.handshake() }
                try tls.sendPending(fd: fd)
                switch progress {
                case .complete: return tls
                case .wantsOutputTaken: continue
                case .wantsInput:
                    switch try tls.receiveCiphertext(fd: fd) {
                    case .fed: continue
                    case .wouldBlock:
                        throw FrameSocket.Failure(.timedOut, "the TLS handshake with \(target) got no answer within \(timeout)")
                    case .endOfFile:
                        continue  // the session now fails with `.truncated`
                    }
                }
            }
        } catch let failure as FrameSocket.Failure {
            tls.sendPendingWithoutWaiting(fd: fd)  // the alert that says why, if any
            guard failure.code != .timedOut else { throw failure }
            throw FrameSocket.Failure(failure.code, TLSError.naming(target, in: failure.description), tls: failure.tls)
        }
    }

    // MARK: Sending

    /// Encrypts all of `bytes` and writes it to the blocking socket.
    func send(_ bytes: [UInt8], fd: Int32) throws {
        var offset = 0
        while offset < bytes.count {
            offset += try bytes.withUnsafeBytes { raw in try encrypt(UnsafeRawBufferPointer(rebasing: raw[offset...])) }
            try sendPending(fd: fd)
        }
    }

    /// Encrypts as much of `bytes` as the session takes now; the
    /// ciphertext waits in `pending`. Returns the plaintext bytes taken.
    func encrypt(_ bytes: UnsafeRawBufferPointer) throws -> Int {
        let taken = try Self.mapped { () throws(TLSError) in try session.writePlaintext(bytes) }
        takeOutput()
        return taken
    }

    /// Whether ciphertext is waiting for the socket.
    var hasPendingOutput: Bool { !pending.isEmpty }

    /// Writes what is pending to the blocking socket.
    func sendPending(fd: Int32) throws {
        takeOutput()
        guard !pending.isEmpty else { return }
        do {
            try writeAll(fd, pending)
        } catch {
            throw FrameSocket.Failure("sending failed: \(error)")
        }
        pending.removeAll(keepingCapacity: true)
    }

    /// Writes what the non-blocking socket takes of what is pending.
    func writePendingWithoutWaiting(fd: Int32) throws {
        takeOutput()
        guard !pending.isEmpty else { return }
        let result: SocketWriteResult
        do {
            result = try pending.withUnsafeBytes { (raw) throws(SocketError) in try writeSocket(fd, from: raw) }
        } catch {
            throw FrameSocket.Failure("sending failed: \(error)")
        }
        if case .bytes(let n) = result { pending.removeFirst(n) }
    }

    /// Queues close_notify and sends it (and anything before it) if the
    /// socket takes it at once: closing never waits.
    func closeNotify(fd: Int32) {
        session.close()
        sendPendingWithoutWaiting(fd: fd)
    }

    /// Queues close_notify and writes it to the blocking socket.
    func sendCloseNotify(fd: Int32) throws {
        session.close()
        try sendPending(fd: fd)
    }

    private func sendPendingWithoutWaiting(fd: Int32) {
        takeOutput()
        guard !pending.isEmpty else { return }
        _ = pending.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)) }
        pending.removeAll()
    }

    private func takeOutput() {
        let count = session.pendingOutput
        guard count > 0 else { return }
        let start = pending.count
        pending += [UInt8](repeating: 0, count: count)
        let taken = pending.withUnsafeMutableBytes { session.takeOutput(into: UnsafeMutableRawBufferPointer(rebasing: $0[start...])) }
        pending.removeLast(count - taken)
    }

    // MARK: Receiving

    /// What `read` got.
    enum ReadResult { case bytes(Int), closed, wouldBlock }

    /// Plaintext into `buffer`, reading the socket as needed: `.closed` at
    /// close_notify, at the end of the stream, or at a reset; `.wouldBlock`
    /// when the socket had nothing (its timeout passed, or it is non-blocking).
    func read(fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws -> ReadResult {
        while true {
            let result: TLSSession.ReadResult
            do throws(TLSError) {
                result = try session.readPlaintext(into: buffer)
            } catch where error.code == .truncated {
                return .closed  // frames delimit themselves: an ordinary end of the stream
            } catch {
                throw FrameSocket.Failure(.tls, "TLS failed: \(error.message)", tls: error)
            }
            switch result {
            case .bytes(let n): return .bytes(n)
            case .closed: return .closed
            case .wantsInput:
                switch try receiveCiphertext(fd: fd) {
                case .fed, .endOfFile: continue
                case .wouldBlock: return .wouldBlock
                }
            }
        }
    }

    /// Plaintext the session can give without reading the socket (from
    /// records already received), or nil. A poller calls it until nil after
    /// `read`: records that arrived together wait in the session, where
    /// `poll(2)` cannot see them.
    func readBuffered(into buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        do throws(TLSError) {
            guard case .bytes(let n) = try session.readPlaintext(into: buffer) else { return nil }
            return n
        } catch where error.code == .truncated {
            return nil  // the next `read` reports the end
        } catch {
            throw FrameSocket.Failure(.tls, "TLS failed: \(error.message)", tls: error)
        }
    }

    private enum Received { case fed, wouldBlock, endOfFile }

    /// One socket read, fed to the session (a reset counts as the end).
    private func receiveCiphertext(fd: Int32) throws -> Received {
        let got: SocketReadResult
        do {
            got = try readBuffer.withUnsafeMutableBytes { (raw) throws(SocketError) in try readSocket(fd, into: raw) }
        } catch let error as SocketError where error.isDisconnect {
            session.endOfInput()
            return .endOfFile
        } catch {
            throw FrameSocket.Failure("reading failed: \(error)")
        }
        switch got {
        case .wouldBlock:
            return .wouldBlock
        case .endOfFile:
            session.endOfInput()
            return .endOfFile
        case .bytes(let n):
            var fed = 0
            while fed < n {
                let took = try readBuffer[fed..<n].withUnsafeBytes { raw in
                    try Self.mapped { () throws(TLSError) in try session.feed(raw) }
                }
                // The session wanted input, so it holds less than a record: the read fits.
                guard took > 0 else { throw FrameSocket.Failure(.tls, "the server's TLS records overflow the session's input buffer") }
                fed += took
            }
            return .fed
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
