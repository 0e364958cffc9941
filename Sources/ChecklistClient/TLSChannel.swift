import ChecklistSocket
import ChecklistTLS
import Synchronization

/// TLS between a connection's socket and its frames. The handshake runs on
/// the connecting thread over the blocking socket (`handshake`); from then
/// on only the I/O thread uses the channel, over the non-blocking socket:
/// it encrypts queued frames (`encrypt`, `takeCiphertext`) and decrypts
/// what it reads (`receiveCiphertext`, `readPlaintext`).
///
/// Sendable: `session` (not thread-safe) is touched only inside
/// `sessionLock`, and `readBuffer` only inside `readerLock`. (A
/// `Mutex<TLSSession>` cannot be used: the session's methods take buffer
/// pointers, which the compiler's region checking cannot tell apart from
/// state shared with the caller.) Both locks are held only while OpenSSL
/// works on memory or one non-blocking read runs, never across a wait.
final class TLSChannel: @unchecked Sendable {
    /// The read size: one whole TLS record (16 KiB of plaintext plus its
    /// overhead), so that one read usually completes a record.
    static let readSize = (16 << 10) + 512

    let fd: Int32
    private let session: TLSSession
    private let sessionLock = Mutex(())
    private let readBuffer: UnsafeMutableRawBufferPointer
    private let readerLock = Mutex(())

    /// Wraps a new session (see `handshake`); the caller keeps no
    /// reference to it. Reads and writes wait for the handshake.
    init(fd: Int32, session: TLSSession) {
        self.fd = fd
        self.session = session
        self.readBuffer = .allocate(byteCount: Self.readSize, alignment: 16)
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Runs `body` with the session, under `sessionLock`.
    func withSession<R: Sendable, E: Error>(_ body: (TLSSession) throws(E) -> R) throws(E) -> R {
        try sessionLock.withLock { (_) throws(E) -> R in try body(session) }
    }

    /// The verified subject of the server's certificate.
    var peerCertificateSubject: String? {
        withSession { $0.peerCertificateSubject }
    }

    /// The negotiated version.
    var protocolVersion: TLSVersion? {
        withSession { $0.protocolVersion }
    }

    /// Hands plaintext to the session; returns how many bytes it took
    /// (fewer than offered, or none, while its output buffer is full: take
    /// the ciphertext and send it first).
    func encrypt(_ plaintext: UnsafeRawBufferPointer) throws(ClientError) -> Int {
        try withSession { (s) throws(ClientError) -> Int in
            guard !s.closeSent else { throw ClientError(.connectionClosed, "the connection was closed by the client") }
            return try Self.mapped { () throws(TLSError) in try s.writePlaintext(plaintext) }
        }
    }

    /// True when the session has ciphertext waiting to be sent.
    var hasPendingOutput: Bool {
        withSession { $0.pendingOutput > 0 }
    }

    /// Appends the ciphertext the session has waiting to `out`.
    func takeCiphertext(appendingTo out: inout [UInt8]) {
        let taken = withSession { Self.takeAll(from: $0) }
        out.append(contentsOf: taken)
    }

    /// Sends what the session has waiting (handshake messages).
    func sendPending() throws(ClientError) {
        try transmit(withSession { Self.takeAll(from: $0) })
    }

    private func transmit(_ ciphertext: [UInt8]) throws(ClientError) {
        do throws(SocketError) {
            try writeAll(fd, ciphertext)
        } catch {
            throw ClientError(.connectionClosed, "the connection was lost: \(error)")
        }
    }

    /// Sends what the session has waiting if the socket takes it at once
    /// (an alert, close_notify): a failing or closing connection never
    /// waits for it.
    func sendPendingWithoutWaiting() {
        let bytes = withSession { Self.takeAll(from: $0) }
        guard !bytes.isEmpty else { return }
        _ = bytes.withUnsafeBytes { try? sendWithoutWaiting(fd, $0) }
    }

    /// Decrypts plaintext into `buffer` from the records the session holds:
    /// `.wouldBlock` when it needs more ciphertext (`receiveCiphertext`).
    func readPlaintext(into buffer: UnsafeMutableRawBufferPointer) throws(ClientError) -> SocketReadResult {
        let result: TLSSession.ReadResult
        do throws(TLSError) {
            result = try withSession { (s) throws(TLSError) in try s.readPlaintext(into: buffer) }
        } catch where error.code == .truncated {
            // The stream ended without close_notify. Frames delimit
            // themselves, so this is an ordinary end of the connection.
            return .endOfFile
        } catch {
            throw ClientError(tls: error)
        }
        switch result {
        case .bytes(let n): return .bytes(n)
        case .closed: return .endOfFile
        case .wantsInput: return .wouldBlock
        }
    }

    /// One socket read, fed to the session; the end of file is passed on
    /// to it. Returns false when the socket had nothing (`EAGAIN`).
    @discardableResult
    func receiveCiphertext() throws(ClientError) -> Bool {
        try readerLock.withLock { (_) throws(ClientError) -> Bool in
            let space = readBuffer
            let got: SocketReadResult
            do throws(SocketError) {
                got = try readSocket(fd, into: space)
            } catch {
                throw ClientError(.connectionClosed, "the connection was lost: \(error)")
            }
            switch got {
            case .wouldBlock:
                return false
            case .endOfFile:
                withSession { (s) in s.endOfInput() }
                return true
            case .bytes(let n):
                // The session wanted input, so it holds less than one record:
                // far less than its input limit, and all n bytes fit.
                let fed = try Self.mapped { () throws(TLSError) in
                    try withSession { (s) throws(TLSError) in try s.feed(UnsafeRawBufferPointer(rebasing: space[..<n])) }
                }
                guard fed == n else {
                    throw ClientError(.protocolViolation, "the server's TLS records overflow the session's input buffer")
                }
                return true
            }
        }
    }

    /// Queues close_notify and sends it if the socket takes it at once.
    /// Called by the I/O thread when the client closes the connection.
    func sendCloseNotify() {
        withSession { $0.close() }
        sendPendingWithoutWaiting()
    }

    /// All the ciphertext the session has waiting.
    static func takeAll(from session: TLSSession) -> [UInt8] {
        let count = session.pendingOutput
        guard count > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: count) { storage, initialized in
            initialized = session.takeOutput(into: UnsafeMutableRawBufferPointer(storage))
        }
    }

    /// Runs `body`, turning a `TLSError` into the client's error.
    static func mapped<T>(_ body: () throws(TLSError) -> T) throws(ClientError) -> T {
        do throws(TLSError) {
            return try body()
        } catch {
            throw ClientError(tls: error)
        }
    }
}

extension ClientError {
    /// The client's error for a TLS failure: `.certificateRejected` when a
    /// certificate did not verify (either side), `.tlsFailed` otherwise.
    init(tls error: TLSError) {
        self.init(error.code == .certificateRejected ? .certificateRejected : .tlsFailed, error.message)
    }
}
