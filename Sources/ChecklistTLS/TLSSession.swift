import COpenSSL

/// One TLS connection's state, with no I/O of its own: the owner moves
/// bytes between the socket and the session.
///
/// Ciphertext from the peer goes in with `feed(_:)`; `handshake()` and
/// `readPlaintext(into:)` consume it. Plaintext goes in with
/// `writePlaintext(_:)`; whatever the session wants sent (handshake
/// messages, records, alerts) waits in `pendingOutput` until the owner takes
/// it with `takeOutput(into:)` and writes it to the socket. After every call
/// the owner sends the pending output, then:
///
/// - `handshake()` `.wantsInput` (OpenSSL's WANT_READ): read the socket and `feed`.
/// - `.wantsOutputTaken` (WANT_WRITE): take the output, call again.
/// - `readPlaintext` `.wantsInput`: read the socket and `feed`; `.closed`:
///   the peer sent close_notify.
/// - at the socket's end of file: `endOfInput()`, then read what is left.
///
/// Memory is bounded: at most `Limits.maxBufferedInput` bytes of fed,
/// unprocessed ciphertext (`feed` accepts less when full) and about
/// `Limits.maxBufferedOutput` bytes of ciphertext waiting to be taken
/// (`writePlaintext` accepts less when full), plus OpenSSL's own record
/// buffers (released while idle).
///
/// The first failure is sticky: every later call throws it again.
///
/// Not thread-safe: one owner (a thread, or a lock written next to it).
/// This class owns the `SSL *` (and with it its two memory BIOs) and frees
/// it in `deinit`.
public final class TLSSession {
    /// The bounds of a session's buffers.
    public struct Limits: Sendable, Hashable {
        /// Fed ciphertext not yet processed.
        public var maxBufferedInput: Int
        /// Ciphertext not yet taken (exceeded by at most one write's record overhead).
        public var maxBufferedOutput: Int

        public init(maxBufferedInput: Int = 64 << 10, maxBufferedOutput: Int = 64 << 10) {
            precondition(maxBufferedInput > 0 && maxBufferedOutput > 0, "TLS buffer limits must be positive")
            self.maxBufferedInput = maxBufferedInput
            self.maxBufferedOutput = maxBufferedOutput
        }
    }

    /// Where the handshake stands.
    public enum HandshakeProgress: Sendable, Hashable {
        /// Done: plaintext can flow.
        case complete
        /// Needs bytes from the peer (after the pending output is sent).
        case wantsInput
        /// Needs the pending output taken before it can go on.
        case wantsOutputTaken
    }

    /// What `readPlaintext(into:)` got.
    public enum ReadResult: Sendable, Hashable {
        /// This many plaintext bytes (at least 1).
        case bytes(Int)
        /// No whole record yet: feed more ciphertext.
        case wantsInput
        /// The peer sent close_notify: no more plaintext will come.
        case closed
    }

    /// The first byte of every TLS handshake record (ContentType handshake).
    public static let handshakeRecordType: UInt8 = 0x16

    public let role: TLSContext.Role
    public let limits: Limits
    /// For a client session: the name the server's certificate must carry.
    public let serverName: String?

    let ssl: OpaquePointer
    /// The memory BIO OpenSSL reads the peer's ciphertext from (owned by `ssl`).
    private let incoming: OpaquePointer
    /// The memory BIO OpenSSL writes ciphertext for the peer to (owned by `ssl`).
    private let outgoing: OpaquePointer

    /// True once the handshake finished.
    public private(set) var isHandshakeComplete = false
    /// True once `endOfInput()` was called.
    public private(set) var inputEnded = false
    /// True once the peer's close_notify arrived.
    public private(set) var closeReceived = false
    /// True once `close()` queued our close_notify.
    public private(set) var closeSent = false
    /// The failure every later call rethrows.
    public private(set) var failure: TLSError?
    private var receivedAny = false

    /// A session that accepts a client's handshake.
    public convenience init(server context: TLSContext, limits: Limits = Limits()) throws(TLSError) {
        precondition(context.role == .server, "TLSSession(server:) needs a server context")
        try self.init(context, limits: limits, serverName: nil)
        SSL_set_accept_state(ssl)
    }

    /// A session that starts a handshake with a server and verifies that
    /// the server's certificate names `serverName` (the context's
    /// configured `serverName`, if any, takes its place): a DNS name (also
    /// sent as SNI) or a numeric IPv4/IPv6 address (matched against IP SANs).
    public convenience init(client context: TLSContext, serverName: String, limits: Limits = Limits()) throws(TLSError) {
        precondition(context.role == .client, "TLSSession(client:) needs a client context")
        var name = context.serverNameOverride ?? serverName
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        try self.init(context, limits: limits, serverName: name)
        try expectPeerName(name)
        SSL_set_connect_state(ssl)
    }

    private init(_ context: TLSContext, limits: Limits, serverName: String?) throws(TLSError) {
        OpenSSLErrors.clear()
        guard let ssl = SSL_new(context.handle) else {
            throw TLSError(.configuration, OpenSSLErrors.describe("cannot create a TLS session"))
        }
        guard let incoming = BIO_new(BIO_s_mem()), let outgoing = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw TLSError(.configuration, OpenSSLErrors.describe("cannot create the TLS session's buffers"))
        }
        SSL_set_bio(ssl, incoming, outgoing)  // ssl owns both BIOs from here
        self.ssl = ssl
        self.incoming = incoming
        self.outgoing = outgoing
        self.role = context.role
        self.limits = limits
        self.serverName = serverName
    }

    deinit { SSL_free(ssl) }

    /// Makes verification require `name`: an IP SAN for a numeric address,
    /// else a DNS name (no partial wildcards), which is also sent as SNI.
    private func expectPeerName(_ name: String) throws(TLSError) {
        OpenSSLErrors.clear()
        let parameters = SSL_get0_param(ssl)
        X509_VERIFY_PARAM_set_hostflags(parameters, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
        if let address = a2i_IPADDRESS(name) {
            ASN1_OCTET_STRING_free(address)
            guard X509_VERIFY_PARAM_set1_ip_asc(parameters, name) == 1 else {
                throw TLSError(.configuration, OpenSSLErrors.describe("cannot expect the address \(name)"))
            }
        } else {
            OpenSSLErrors.clear()  // a2i_IPADDRESS leaves nothing useful for a host name
            guard SSL_set1_host(ssl, name) == 1, copenssl_set_tlsext_host_name(ssl, name) == 1 else {
                throw TLSError(.configuration, OpenSSLErrors.describe("cannot expect the server name \(name)"))
            }
        }
    }

    // MARK: Ciphertext in and out

    /// Room left for `feed(_:)`.
    public var inputSpace: Int {
        max(0, limits.maxBufferedInput - Int(BIO_ctrl_pending(incoming)))
    }

    /// Hands ciphertext from the peer to the session; returns how many of
    /// the bytes it took (fewer than offered when `inputSpace` runs out;
    /// keep the rest and offer it again after reading plaintext).
    ///
    /// - Throws: on a server session, `.notTLS` if the very first byte is
    ///   not a TLS handshake record (0x16), e.g. a plaintext frame.
    public func feed(_ bytes: UnsafeRawBufferPointer) throws(TLSError) -> Int {
        if let failure { throw failure }
        guard let base = bytes.baseAddress, !bytes.isEmpty, !inputEnded else { return 0 }
        if !receivedAny {
            receivedAny = true
            if role == .server && bytes[0] != Self.handshakeRecordType {
                throw fail(TLSError(.notTLS, "the first byte is 0x\(String(bytes[0], radix: 16)), not a TLS handshake record "
                                    + "(0x16): the peer does not speak TLS"))
            }
        }
        let count = min(bytes.count, inputSpace)
        guard count > 0 else { return 0 }
        let written = BIO_write(incoming, base, Int32(count))
        return max(0, Int(written))
    }

    /// Says that the peer's stream ended (the socket read end of file).
    /// Bytes fed before still count; after them, the session sees the end:
    /// before close_notify it is `.truncated`.
    public func endOfInput() {
        guard !inputEnded else { return }
        inputEnded = true
        _ = copenssl_BIO_set_mem_eof_return(incoming, 0)
    }

    /// Ciphertext waiting to be sent to the peer.
    public var pendingOutput: Int {
        Int(BIO_ctrl_pending(outgoing))
    }

    /// Moves up to `buffer.count` bytes of pending ciphertext into `buffer`;
    /// returns how many. Send them to the peer in order.
    public func takeOutput(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = buffer.baseAddress, !buffer.isEmpty, pendingOutput > 0 else { return 0 }
        return max(0, Int(BIO_read(outgoing, base, Int32(clamping: buffer.count))))
    }

    /// Room left for `writePlaintext(_:)`.
    public var outputSpace: Int {
        max(0, limits.maxBufferedOutput - pendingOutput)
    }

    // MARK: Handshake, plaintext, close

    /// Drives the handshake as far as the fed bytes allow.
    ///
    /// - Throws: `TLSError`: `.certificateRejected` (with
    ///   `verificationFailure` when this side rejected the peer's
    ///   certificate), `.handshakeFailed`, `.truncated` after `endOfInput()`.
    ///   Send the pending output (an alert) before closing.
    public func handshake() throws(TLSError) -> HandshakeProgress {
        if let failure { throw failure }
        if isHandshakeComplete { return .complete }
        OpenSSLErrors.clear()
        let rc = SSL_do_handshake(ssl)
        if rc == 1 {
            isHandshakeComplete = true
            return .complete
        }
        switch SSL_get_error(ssl, rc) {
        case SSL_ERROR_WANT_READ: return .wantsInput
        case SSL_ERROR_WANT_WRITE: return .wantsOutputTaken
        default: throw fail(describeFailure(after: rc))
        }
    }

    /// Decrypts into `buffer` (finishing the handshake first if needed).
    ///
    /// - Throws: `.protocolViolation` for a record that does not decrypt
    ///   or decode, or a fatal alert; `.truncated` if the input ended
    ///   without close_notify; the handshake's errors while it is unfinished.
    public func readPlaintext(into buffer: UnsafeMutableRawBufferPointer) throws(TLSError) -> ReadResult {
        if let failure { throw failure }
        if closeReceived { return .closed }
        precondition(!buffer.isEmpty, "readPlaintext needs room to read into")
        OpenSSLErrors.clear()
        var count = 0
        let rc = SSL_read_ex(ssl, buffer.baseAddress, buffer.count, &count)
        if rc == 1 {
            isHandshakeComplete = true
            return .bytes(count)
        }
        switch SSL_get_error(ssl, rc) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return .wantsInput
        case SSL_ERROR_ZERO_RETURN:
            closeReceived = true
            return .closed
        default:
            throw fail(describeFailure(after: 0))
        }
    }

    /// Encrypts plaintext for the peer; returns how many bytes it took
    /// (fewer than offered, possibly 0, when `outputSpace` runs out: take
    /// the output, then offer the rest again). Call only after the
    /// handshake is complete and before `close()`.
    public func writePlaintext(_ bytes: UnsafeRawBufferPointer) throws(TLSError) -> Int {
        if let failure { throw failure }
        precondition(isHandshakeComplete && !closeSent, "writePlaintext needs an established, open session")
        let count = min(bytes.count, outputSpace)
        guard let base = bytes.baseAddress, count > 0 else { return 0 }
        OpenSSLErrors.clear()
        var written = 0
        if SSL_write_ex(ssl, base, count, &written) == 1 { return written }
        throw fail(describeFailure(after: 0))
    }

    /// Queues close_notify for the peer (take it with `takeOutput`).
    /// Nothing can be written after it. Idempotent.
    public func close() {
        guard !closeSent else { return }
        closeSent = true
        guard isHandshakeComplete, failure == nil else { return }
        OpenSSLErrors.clear()
        _ = SSL_shutdown(ssl)
        OpenSSLErrors.clear()
    }

    /// Keeps the first failure for every later call.
    private func fail(_ error: TLSError) -> TLSError {
        if failure == nil { failure = error }
        return failure!
    }
}
