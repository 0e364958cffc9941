import ChecklistModel
import ChecklistSocket
import ChecklistTLS

/// What went wrong on a `FrameStream`: a small struct with a code, a
/// message, and the failure below it (the socket's, TLS's, or the framing
/// error), so that each user (the client library, the blocking
/// `FrameSocket`, the benchmark) maps it to its own errors.
public struct FrameStreamError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure. A struct with static constants, so that new
    /// codes never break users' `switch` statements.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let rawValue: UInt8
        private init(_ rawValue: UInt8) { self.rawValue = rawValue }

        /// A socket call failed (see `socket`; `isDisconnect` for a reset).
        public static let socket = Code(1)
        /// TLS failed: the handshake or a record (see `tls`).
        public static let tls = Code(2)
        /// The peer broke framing: a frame length under the header or over
        /// the limit (see `framing`).
        public static let framing = Code(3)
        /// The send queue holds bytes and the new ones would take it past
        /// its limit; nothing was queued.
        public static let sendQueueFull = Code(4)
        /// A wait passed its deadline.
        public static let timedOut = Code(5)
        /// The peer closed the connection before an exchange (the TLS
        /// handshake) was complete.
        public static let closed = Code(6)

        public var description: String {
            ["", "socket", "tls", "framing", "sendQueueFull", "timedOut", "closed"][Int(rawValue)]
        }
    }

    public let code: Code
    /// A description for humans; never parse it.
    public let message: String
    /// The socket failure behind a `.socket` error.
    public let socket: SocketError?
    /// The TLS failure behind a `.tls` error.
    public let tls: TLSError?
    /// The framing error behind a `.framing` error (`MALFORMED_FRAME`, `FRAME_TOO_LARGE`).
    public let framing: ChecklistError?

    public init(_ code: Code, _ message: String, socket: SocketError? = nil, tls: TLSError? = nil,
                framing: ChecklistError? = nil) {
        self.code = code
        self.message = message
        self.socket = socket
        self.tls = tls
        self.framing = framing
    }

    init(_ error: SocketError) {
        self.init(.socket, error.description, socket: error)
    }

    init(_ error: TLSError) {
        self.init(.tls, error.message, tls: error)
    }

    init(_ failure: TLSSocketStream.Failure) {
        switch failure {
        case .socket(let error): self.init(error)
        case .tls(let error): self.init(error)
        }
    }

    /// True when the peer reset the connection (or it is otherwise gone).
    public var isDisconnect: Bool { socket?.isDisconnect ?? false }

    public var description: String { message }
}
