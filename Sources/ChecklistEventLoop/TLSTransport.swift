#if canImport(Glibc)
import Glibc
#endif
import ChecklistSocket
import ChecklistTLS

/// A TLS port's settings (`TCPServer.Listener.tls`).
public struct TLSListenerSettings: Sendable {
    /// The context each new connection's session is made from. Reloading it
    /// (SIGHUP) changes what new connections get; open ones keep theirs.
    public var context: ReloadableTLSContext
    /// How long a connection may take to complete its handshake before it
    /// is closed (checked every `ConnectionLimits.tickInterval`).
    public var handshakeTimeout: Duration
    /// The bounds of each session's ciphertext buffers.
    public var sessionLimits: TLSSession.Limits

    public init(context: ReloadableTLSContext, handshakeTimeout: Duration = .seconds(10),
                sessionLimits: TLSSession.Limits = TLSSession.Limits()) {
        self.context = context
        self.handshakeTimeout = handshakeTimeout
        self.sessionLimits = sessionLimits
    }
}

/// Why the TLS layer of a connection closed it (`SocketConnectionHandler.connectionTLSFailed`).
public struct TLSConnectionFailure: Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure. A struct with static constants, so that new
    /// reasons never break a `switch`.
    public struct Reason: Sendable, Hashable, CustomStringConvertible {
        /// The name used in log lines and metrics, e.g. `not_tls`.
        public let name: String
        private init(_ name: String) { self.name = name }

        /// The first byte was not a TLS handshake record: a plaintext client on the TLS port.
        public static let notTLS = Reason("not_tls")
        /// The handshake failed: garbage records, no common version or
        /// cipher, a client certificate missing or not verifying.
        public static let handshakeFailed = Reason("handshake_failed")
        /// The peer closed the connection in the middle of the handshake.
        public static let handshakeTruncated = Reason("handshake_truncated")
        /// The handshake did not complete within `TLSListenerSettings.handshakeTimeout`.
        public static let handshakeTimeout = Reason("handshake_timeout")
        /// After the handshake, a record did not decrypt or decode, or the peer sent a fatal alert.
        public static let recordError = Reason("record_error")

        public var description: String { name }
    }

    public let reason: Reason
    /// For humans (OpenSSL's text included); never parse it.
    public let message: String

    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    /// Classifies a session's error by the stage it happened in.
    init(_ error: TLSError, established: Bool) {
        let reason: Reason
        if established {
            reason = .recordError
        } else if error.code == .notTLS {
            reason = .notTLS
        } else if error.code == .truncated {
            reason = .handshakeTruncated
        } else {
            reason = .handshakeFailed
        }
        self.init(reason, error.message)
    }

    public var description: String { "\(reason): \(message)" }
}

/// A connection's TLS state: its session (made from the context current
/// at accept) and the ciphertext taken from the session that the kernel has
/// not accepted yet. Owned by one `SocketConnection`, on its loop thread.
///
/// Memory while idle: the session (OpenSSL releases its record buffers
/// when idle) and nothing else; the ciphertext read from the socket goes
/// through the loop's scratch buffer (`ServerLoopContext.tlsScratch`), never
/// a buffer per connection.
package final class TLSTransport {
    package let session: TLSSession
    /// How long the handshake may take.
    package let handshakeTimeout: Duration
    /// Ciphertext taken from the session, `[unsentOffset...]` not yet sent.
    private var unsent: [UInt8] = []
    private var unsentOffset = 0

    package init(session: TLSSession, handshakeTimeout: Duration) {
        self.session = session
        self.handshakeTimeout = handshakeTimeout
    }

    /// The handshake is complete: plaintext flows.
    package var isEstablished: Bool { session.isHandshakeComplete }

    /// Ciphertext waiting for the socket (taken or still in the session).
    package var pendingCiphertext: Int { unsent.count - unsentOffset + session.pendingOutput }

    /// Sends ciphertext: what a short send left over first, then the
    /// session's output, through `scratch`. Returns the bytes sent and
    /// whether the socket is full (wait for `EPOLLOUT`).
    package func send(fd: Int32, scratch: UnsafeMutableRawBufferPointer) throws(SocketError) -> (sent: Int, blocked: Bool) {
        var sent = 0
        while unsentOffset < unsent.count {
            let result: Result<SocketWriteResult, SocketError> = unsent.withUnsafeBytes { raw in
                Result { () throws(SocketError) in try writeSocket(fd, from: UnsafeRawBufferPointer(rebasing: raw[unsentOffset...])) }
            }
            guard case .bytes(let count) = try result.get() else { return (sent, true) }
            sent += count
            unsentOffset += count
        }
        unsent = []
        unsentOffset = 0
        while true {
            let taken = session.takeOutput(into: scratch)
            guard taken > 0 else { return (sent, false) }
            let chunk = UnsafeRawBufferPointer(rebasing: scratch[..<taken])
            switch try writeSocket(fd, from: chunk) {
            case .bytes(let count) where count == taken:
                sent += count
            case .bytes(let count):
                sent += count
                unsent = Array(chunk[count...])
                return (sent, true)
            case .wouldBlock:
                unsent = Array(chunk)
                return (sent, true)
            }
        }
    }
}
