#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call: which operation, and the `errno` it left.
///
/// Kept deliberately small: the code is the raw `errno` value, so callers can
/// compare it with the platform constants (`ECONNREFUSED`, `EAGAIN`, ...).
/// Address-parsing failures use `EINVAL`.
public struct SocketError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The `errno` value.
    public var code: Int32
    /// What was being done, e.g. `"connect"` or `"bind 127.0.0.1:80"`.
    public var operation: String

    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    /// The error for the `errno` the last failing call left behind.
    public static func lastError(_ operation: String) -> SocketError {
        SocketError(code: errno, operation: operation)
    }

    /// True for `EAGAIN`/`EWOULDBLOCK` (a socket timeout on a blocking socket reports this too).
    public var isWouldBlock: Bool { code == EAGAIN || code == EWOULDBLOCK }

    /// True when the peer went away: reset, broken pipe, or not connected any more.
    public var isDisconnect: Bool { code == ECONNRESET || code == EPIPE || code == ENOTCONN || code == ECONNABORTED }

    public var description: String {
        "\(operation): \(String(cString: strerror(code))) (errno \(code))"
    }
}
