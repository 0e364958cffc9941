import COpenSSL

/// A TLS failure: what went wrong (`code`), a message for humans with
/// OpenSSL's own text attached, and, when the peer's certificate did not
/// verify, OpenSSL's reason for it.
public struct TLSError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong. A struct with static constants rather than a public
    /// enum, so that new codes never break users' `switch` statements.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case configuration, certificateRejected, handshakeFailed, notTLS, truncated, protocolViolation
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A certificate, key or CA file could not be read or does not fit
        /// (e.g. the key does not belong to the certificate).
        public static let configuration = Code(.configuration)
        /// The peer's certificate did not verify: unknown CA, expired, wrong
        /// name, or missing when one is required. See `verificationFailure`.
        public static let certificateRejected = Code(.certificateRejected)
        /// The handshake failed for another reason: no common version or
        /// cipher, an alert from the peer, a malformed handshake message.
        public static let handshakeFailed = Code(.handshakeFailed)
        /// A server session's first byte is not a TLS handshake record
        /// (0x16): the peer speaks plaintext (or something else) to a TLS port.
        public static let notTLS = Code(.notTLS)
        /// The peer's stream ended in the middle of the handshake or of a
        /// record, without a close_notify alert.
        public static let truncated = Code(.truncated)
        /// After the handshake, a record did not decrypt or decode, or the
        /// peer sent a fatal alert.
        public static let protocolViolation = Code(.protocolViolation)

        /// The code's name, e.g. `certificateRejected`.
        public var description: String {
            switch base {
            case .configuration: return "configuration"
            case .certificateRejected: return "certificateRejected"
            case .handshakeFailed: return "handshakeFailed"
            case .notTLS: return "notTLS"
            case .truncated: return "truncated"
            case .protocolViolation: return "protocolViolation"
            }
        }
    }

    /// The kind of failure.
    public let code: Code
    /// A description for humans (with OpenSSL's messages); never parse it.
    public let message: String
    /// OpenSSL's reason why the peer's certificate did not verify
    /// (`X509_verify_cert_error_string`, e.g. "certificate has expired"),
    /// or nil when verification was not the problem.
    public let verificationFailure: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, verificationFailure: String? = nil) {
        self.code = code
        self.message = message
        self.verificationFailure = verificationFailure
    }

    public var description: String { message }

    /// `message` (a TLS error's, or another failure's during a handshake)
    /// naming the peer: "the TLS handshake failed: X" becomes "the TLS
    /// handshake with `target` failed: X"; a message that names no TLS
    /// stage gets "the TLS handshake with `target` failed: " in front.
    public static func naming(_ target: String, in message: String) -> String {
        for stage in ["the TLS handshake ", "the TLS connection "] where message.hasPrefix(stage) {
            return stage + "with \(target) " + message.dropFirst(stage.count)
        }
        return "the TLS handshake with \(target) failed: \(message)"
    }
}

/// The thread's OpenSSL error queue. Every call into OpenSSL that can fail
/// clears it first and drains it after, on the same thread (the queue is
/// per thread), so messages never leak from one session into another.
enum OpenSSLErrors {
    /// Forgets whatever an earlier call left in this thread's queue.
    static func clear() {
        ERR_clear_error()
    }

    /// Empties this thread's queue and returns its messages
    /// (`ERR_error_string_n`), oldest first, joined by "; ".
    static func drain() -> String {
        var messages: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            let text = buffer.withUnsafeMutableBufferPointer { chars in
                ERR_error_string_n(code, chars.baseAddress, chars.count)
                return String(cString: chars.baseAddress!)
            }
            messages.append(text)
        }
        return messages.joined(separator: "; ")
    }

    /// `what`, followed by OpenSSL's messages if it left any.
    static func describe(_ what: String) -> String {
        let details = drain()
        return details.isEmpty ? what : "\(what): \(details)"
    }
}
