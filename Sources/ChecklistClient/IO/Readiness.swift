#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the client's I/O thread waits for on one socket.
struct ReadinessInterest: OptionSet, Sendable {
    let rawValue: UInt8
    static let readable = ReadinessInterest(rawValue: 1)
    static let writable = ReadinessInterest(rawValue: 2)
}

/// One socket that is ready: for reading (bytes, the end of the stream or
/// an error wait there: the read says which) and/or for writing.
struct ReadinessEvent {
    /// The token the socket was registered with.
    var token: UInt64
    var readable: Bool
    var writable: Bool
}

/// The readiness layer under the client's I/O thread (`IOThread`): which of
/// its sockets can be read or written without blocking, and a wake-up that
/// other threads use to interrupt the wait. Two implementations:
/// `EpollReadiness` (Linux only) and `PollReadiness` (`poll(2)` and a pipe,
/// which Apple platforms use and which also runs on Linux, so that both are
/// tested here). `ReadinessKind.configured` picks one.
///
/// Every method but `waker` is called by the I/O thread alone; the object
/// is created on it and never leaves it.
protocol Readiness: AnyObject, SendableMetatype {
    /// Sets up the wait (and its wake-up descriptor).
    init() throws(ClientError)
    /// Wakes a `wait` in progress (or the next one) from any thread.
    var waker: ReadinessWaker { get }
    /// Starts watching `fd`; `event`s for it carry `token`.
    func register(_ fd: Int32, token: UInt64, interest: ReadinessInterest) throws(ClientError)
    /// Changes what `fd` is watched for.
    func update(_ fd: Int32, token: UInt64, interest: ReadinessInterest) throws(ClientError)
    /// Stops watching `fd` (before it is closed).
    func deregister(_ fd: Int32)
    /// Waits until a watched socket is ready or `waker` was used (with
    /// `block` false: only looks), and calls `ready` for each ready socket.
    /// A wake-up is consumed here and reported to no one.
    ///
    /// - Throws: `ClientError` `.ioFailed` when the wait itself fails (not
    ///   for `EINTR`, which is retried by the caller's next turn).
    func wait(block: Bool, _ ready: (ReadinessEvent) -> Void) throws(ClientError)
    /// Closes the descriptors of the wait; the object is not used after.
    func close()
}

/// Interrupts the wait of a `Readiness` from any thread: writes eight bytes
/// to its wake-up descriptor (an eventfd, whose counter they increment, or
/// the write end of a non-blocking pipe). A full pipe already holds a
/// wake-up, so a write that would block is dropped.
struct ReadinessWaker: Sendable {
    let fd: Int32

    func wake() {
        var one: UInt64 = 1
        while write(fd, &one, 8) < 0 && errno == EINTR {}
    }
}

/// Which readiness implementation the client's I/O thread uses.
enum ReadinessKind: String, Sendable, CaseIterable {
    /// epoll (Linux only).
    case epoll
    /// `poll(2)` with a pipe for wake-ups: what Apple platforms use.
    case poll

    /// The environment variable that chooses the implementation:
    /// `CHECKLIST_READINESS=poll` runs the portable one on Linux (the test
    /// suite is run once with each). Read when the I/O thread starts.
    static let environmentVariable = "CHECKLIST_READINESS"

    /// The platform's default, or the one the environment names.
    static var configured: ReadinessKind {
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
    var isAvailable: Bool {
        #if os(Linux)
        return true
        #else
        return self == .poll
        #endif
    }
}

extension ClientError {
    /// The error for a failed system call of the client's I/O, with errno's text.
    static func io(_ operation: String, errno code: Int32) -> ClientError {
        ClientError(.ioFailed, "\(operation) failed: \(String(cString: strerror(code))) (errno \(code))")
    }
}
