import CLinux
import ChecklistSocket
import ChecklistTLS
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// TLS between a connection's socket and its frames: writers hand it whole
/// frames to encrypt and send, the reader thread asks it for plaintext.
///
/// Sendable: `session` (not thread-safe) is touched only inside
/// `sessionLock`, and `readBuffer` only inside `readerLock`. (A
/// `Mutex<TLSSession>` cannot be used: the session's methods take buffer
/// pointers, which the compiler's region checking cannot tell apart from
/// state shared with the caller.)
///
/// Locking rules:
/// - `sessionLock` guards the `TLSSession`. It is held only while OpenSSL
///   works on memory, never across a socket call.
/// - Ciphertext leaves the session only through `write`, which callers run
///   under `ConnectionCore.output`, so records reach the socket in the order
///   the session made them. The reader never sends: what reading makes the
///   session want to send (a TLS 1.3 KeyUpdate answer) goes out with the
///   next write.
/// - `readerLock` guards the reader thread's ciphertext buffer; only that
///   thread takes it, so it is never contended.
final class TLSChannel: @unchecked Sendable {
    /// The reader's read size: one whole TLS record (16 KiB of plaintext
    /// plus its overhead), so that one read usually completes a record.
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

    /// Encrypts `bytes` and writes all of it to the (blocking) socket.
    /// Call under `ConnectionCore.output`.
    func write(_ bytes: [UInt8]) throws(ClientError) {
        // withUnsafeBytes rethrows untyped errors: carry the typed one out by hand.
        let outcome = bytes.withUnsafeBytes { raw in
            Result { () throws(ClientError) in try write(raw) }
        }
        try outcome.get()
    }

    private func write(_ bytes: UnsafeRawBufferPointer) throws(ClientError) {
        var offset = 0
        repeat {
            let ciphertext = try withSession { (s) throws(ClientError) -> [UInt8] in
                guard !s.closeSent else { throw ClientError(.connectionClosed, "the connection was closed by the client") }
                if offset < bytes.count {
                    offset += try Self.mapped { () throws(TLSError) in
                        try s.writePlaintext(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
                    }
                }
                return Self.takeAll(from: s)
            }
            try transmit(ciphertext)
        } while offset < bytes.count
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
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)) }
    }

    /// Reads plaintext into `buffer`, reading and decrypting from the
    /// socket as needed. Only the reader thread calls it.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(ClientError) -> SocketReadResult {
        while true {
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
            case .wantsInput: try receiveCiphertext()
            }
        }
    }

    /// One socket read, fed to the session; the end of file is passed on.
    func receiveCiphertext() throws(ClientError) {
        try readerLock.withLock { (_) throws(ClientError) in
            let space = readBuffer
            let got: SocketReadResult
            do throws(SocketError) {
                got = try readSocket(fd, into: space)
            } catch {
                throw ClientError(.connectionClosed, "the connection was lost: \(error)")
            }
            switch got {
            case .wouldBlock:
                return
            case .endOfFile:
                withSession { (s) in s.endOfInput() }
            case .bytes(let n):
                // The session wanted input, so it holds less than one record:
                // far less than its input limit, and all n bytes fit.
                let fed = try Self.mapped { () throws(TLSError) in
                    try withSession { (s) throws(TLSError) in try s.feed(UnsafeRawBufferPointer(rebasing: space[..<n])) }
                }
                guard fed == n else {
                    throw ClientError(.protocolViolation, "the server's TLS records overflow the session's input buffer")
                }
            }
        }
    }

    /// Queues close_notify and sends it if the socket takes it at once.
    /// Call under `ConnectionCore.output`.
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
