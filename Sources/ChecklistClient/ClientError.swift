import ChecklistModel

/// An error thrown by `ChecklistConnection`.
///
/// A server `ERROR` answer has code `.server` and carries the server's
/// `ChecklistError` (wire code, message, field, current revision) in
/// `serverError`. The other codes describe the connection itself.
///
/// Cancelling the task of a waiting call throws `CancellationError`, not a
/// `ClientError`.
public struct ClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong. A struct with static constants rather than a public
    /// enum, so that new codes never break users' `switch` statements.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case server, connectionFailed, connectionClosed, protocolViolation, timeout, requestTooLarge
            case tlsFailed, certificateRejected, sendQueueFull, ioFailed
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The server answered the request with an `ERROR`; see `serverError`.
        public static let server = Code(.server)
        /// The server could not be reached: name resolution, refused or failed TCP connect.
        public static let connectionFailed = Code(.connectionFailed)
        /// The connection was closed (by `close()`, by the server, or after a
        /// network error) before the answer arrived.
        public static let connectionClosed = Code(.connectionClosed)
        /// The server sent something this client cannot accept: an answer that
        /// does not decode, of the wrong type, or a frame that breaks framing.
        public static let protocolViolation = Code(.protocolViolation)
        /// Connecting, the handshake or a request took longer than allowed.
        public static let timeout = Code(.timeout)
        /// The request would exceed the server's `maxFrameBytes`; it was not sent
        /// (sending it would make the server close the connection).
        public static let requestTooLarge = Code(.requestTooLarge)
        /// TLS failed: the handshake (no common version, an alert, something
        /// that is not TLS answered), a bad record, or the TLS configuration
        /// (a CA or certificate file that does not load). Never followed by
        /// a plaintext attempt.
        public static let tlsFailed = Code(.tlsFailed)
        /// A certificate did not verify: the server's (unknown CA, expired,
        /// wrong name) or, as the server says, ours (missing or refused).
        public static let certificateRejected = Code(.certificateRejected)

        /// The connection's queue of frames not yet written is full: the
        /// server (or the network) takes bytes slower than they are sent.
        /// The request was not sent; the connection stays open. Send again
        /// once earlier requests were answered.
        public static let sendQueueFull = Code(.sendQueueFull)
        /// The client's own I/O failed (the readiness wait, registering a
        /// socket, a thread that could not be started); the message names
        /// the system call and errno. The connections it served are closed
        /// with this code; the host process goes on.
        public static let ioFailed = Code(.ioFailed)

        /// The code's name, e.g. `connectionClosed`.
        public var description: String {
            switch base {
            case .server: return "server"
            case .connectionFailed: return "connectionFailed"
            case .connectionClosed: return "connectionClosed"
            case .protocolViolation: return "protocolViolation"
            case .timeout: return "timeout"
            case .requestTooLarge: return "requestTooLarge"
            case .tlsFailed: return "tlsFailed"
            case .certificateRejected: return "certificateRejected"
            case .sendQueueFull: return "sendQueueFull"
            case .ioFailed: return "ioFailed"
            }
        }
    }

    /// The kind of failure.
    public let code: Code
    /// A description for humans; never parse it.
    public let message: String
    /// The server's error when `code == .server`, otherwise nil.
    public let serverError: ChecklistError?

    /// Creates an error that is not a server answer.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
        self.serverError = nil
        self.wireCode = nil
    }

    /// The error for a server `ERROR` answer.
    public static func server(_ error: ChecklistError) -> ClientError {
        ClientError(server: error)
    }

    private init(server error: ChecklistError) {
        self.code = .server
        self.message = error.message
        self.serverError = error
        self.wireCode = error.code
    }

    /// The wire code of a server error (`NOT_FOUND`, `CONFLICT`, ...), or nil.
    /// Stored, not computed from `serverError`: Swift 6.3.1's optimizer
    /// crashes on `catch let e as ClientError { ... && e.serverError?.code == ... }`
    /// (CopyPropagation "ownership error"); `e.wireCode == ...` compiles.
    public let wireCode: ChecklistError.Code?

    /// `"NOT_FOUND: list 7 not found"` for server errors (wire code name
    /// first), the message for the others.
    public var description: String {
        if let serverError { return serverError.description }
        return message
    }
}
