#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ChecklistSocket

/// Which readiness implementation a loop runs on.
public enum ReadinessKind: String, Sendable, CaseIterable {
    /// epoll with an eventfd (Linux only).
    case epoll
    /// `poll(2)` with a pipe for wake-ups: what Apple platforms use.
    case poll

    /// The environment variable that chooses the implementation for every
    /// loop of the process (server, client, benchmark):
    /// `CHECKLIST_READINESS=poll` runs the portable one on Linux, so test
    /// suites run once with each. A name this platform lacks is ignored.
    public static let environmentVariable = "CHECKLIST_READINESS"

    /// The one the environment names, or the platform's default.
    public static var configured: ReadinessKind {
        if let name = getenv(environmentVariable).map({ String(cString: $0) }), let kind = ReadinessKind(rawValue: name),
           kind.isAvailable {
            return kind
        }
        #if os(Linux)
        return .epoll
        #else
        return .poll
        #endif
    }

    /// Whether this platform has it.
    public var isAvailable: Bool {
        #if os(Linux)
        return true
        #else
        return self == .poll
        #endif
    }

    /// A new readiness object of this kind.
    public func make(capacity: Int = 256) throws(SocketError) -> any Readiness {
        switch self {
        case .epoll:
            #if os(Linux)
            return try EpollReadiness(capacity: capacity)
            #else
            throw SocketError(code: ENOSYS, operation: "epoll (not available on this platform)")
            #endif
        case .poll:
            return try PollReadiness(capacity: capacity)
        }
    }
}
