import ChecklistSocket
import ChecklistTLS
import Synchronization

/// TLS between a connection's socket and its frames, over ChecklistTLS's
/// `TLSSocketStream` (the session-to-socket path every TLS client of the
/// project shares). The handshake runs on the connecting thread over the
/// blocking socket (`handshake`); from then on only the I/O thread uses the
/// channel, over the non-blocking socket: it encrypts queued frames
/// (`encrypt`, `takeCiphertext`) and decrypts what it reads
/// (`receiveCiphertext`, `readPlaintext`).
///
/// Sendable: `stream` (not thread-safe) is touched only inside
/// `sessionLock`, and `readBuffer` only inside `readerLock`. (A
/// `Mutex<TLSSocketStream>` cannot be used: its methods take buffer
/// pointers, which the compiler's region checking cannot tell apart from
/// state shared with the caller.) Both locks are held only while OpenSSL
/// works on memory or one non-blocking read runs, never across a wait
/// (the handshake's blocking writes run before the channel is shared).
final class TLSChannel: @unchecked Sendable {
    let fd: Int32
    private let stream: TLSSocketStream
    private let sessionLock = Mutex(())
    private let readBuffer: UnsafeMutableRawBufferPointer
    private let readerLock = Mutex(())

    /// Wraps a new session (see `handshake`); the caller keeps no
    /// reference to it. Reads and writes wait for the handshake.
    init(fd: Int32, session: TLSSession) {
        self.fd = fd
        self.stream = TLSSocketStream(fd: fd, session: session)
        self.readBuffer = .allocate(byteCount: TLSSocketStream.recordBytes, alignment: 16)
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Runs `body` with the session, under `sessionLock`.
    func withSession<R: Sendable, E: Error>(_ body: (TLSSession) throws(E) -> R) throws(E) -> R {
        try sessionLock.withLock { (_) throws(E) -> R in try body(stream.session) }
    }

    /// Runs `body` with the stream, under `sessionLock`.
    private func withStream<R: Sendable, E: Error>(_ body: (TLSSocketStream) throws(E) -> R) throws(E) -> R {
        try sessionLock.withLock { (_) throws(E) -> R in try body(stream) }
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
        try withStream { (s) throws(ClientError) -> Int in
            guard !s.session.closeSent else { throw ClientError(.connectionClosed, "the connection was closed by the client") }
            return try Self.mapped { () throws(TLSError) in try s.encrypt(plaintext) }
        }
    }

    /// True when the session has ciphertext waiting to be sent.
    var hasPendingOutput: Bool {
        withStream { $0.hasPendingOutput }
    }

    /// Appends the ciphertext the session has waiting to `out`.
    func takeCiphertext(appendingTo out: inout [UInt8]) {
        let taken = withStream { (s) -> [UInt8] in
            var bytes: [UInt8] = []
            s.takePending(appendingTo: &bytes)
            return bytes
        }
        out.append(contentsOf: taken)
    }

    /// Sends what the session has waiting (handshake messages) over the
    /// blocking socket.
    func sendPending() throws(ClientError) {
        do throws(SocketError) {
            try withStream { (s) throws(SocketError) in try s.writeAllPending() }
        } catch {
            throw ClientError(.connectionClosed, "the connection was lost: \(error)")
        }
    }

    /// Sends what the session has waiting if the socket takes it at once
    /// (an alert, close_notify): a failing or closing connection never
    /// waits for it.
    func sendPendingWithoutWaiting() {
        withStream { $0.writePendingWithoutWaiting() }
    }

    /// Decrypts plaintext into `buffer` from the records the session holds:
    /// `.wouldBlock` when it needs more ciphertext (`receiveCiphertext`).
    func readPlaintext(into buffer: UnsafeMutableRawBufferPointer) throws(ClientError) -> SocketReadResult {
        try Self.mapped { () throws(TLSError) in
            try withStream { (s) throws(TLSError) in try s.readPlaintext(into: buffer) }
        }
    }

    /// One socket read, fed to the session; the end of file is passed on
    /// to it. Returns false when the socket had nothing (`EAGAIN`).
    @discardableResult
    func receiveCiphertext() throws(ClientError) -> Bool {
        try readerLock.withLock { (_) throws(ClientError) -> Bool in
            let space = readBuffer
            let received: TLSSocketStream.Received
            do throws(TLSSocketStream.Failure) {
                received = try withStream { (s) throws(TLSSocketStream.Failure) in try s.receive(using: space) }
            } catch {
                switch error {
                case .socket(let error): throw ClientError(.connectionClosed, "the connection was lost: \(error)")
                case .tls(let error): throw ClientError(tls: error)
                }
            }
            return received != .wouldBlock
        }
    }

    /// Queues close_notify and sends it if the socket takes it at once.
    /// Called by the I/O thread when the client closes the connection.
    func sendCloseNotify() {
        withStream { $0.closeNotify() }
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
