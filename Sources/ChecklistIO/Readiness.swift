#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ChecklistSocket

/// What a socket is watched for.
public struct ReadinessInterest: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let readable = ReadinessInterest(rawValue: ReadinessEvents.readable.rawValue)
    public static let writable = ReadinessInterest(rawValue: ReadinessEvents.writable.rawValue)
}

/// What a wait found on one socket. `error` and `hangUp` are reported
/// whatever the interest (as epoll and poll do); the raw values of
/// `readable` and `writable` are those of `ReadinessInterest`.
public struct ReadinessEvents: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Bytes (or the end of the stream) wait to be read.
    public static let readable = ReadinessEvents(rawValue: 1)
    /// The socket takes bytes.
    public static let writable = ReadinessEvents(rawValue: 2)
    /// An error is pending on the socket (`EPOLLERR`, `POLLERR`, `POLLNVAL`).
    public static let error = ReadinessEvents(rawValue: 4)
    /// The peer hung up (`EPOLLHUP`, `POLLHUP`).
    public static let hangUp = ReadinessEvents(rawValue: 8)
}

/// One socket that is ready.
public struct ReadinessEvent: Sendable {
    /// The token the socket was registered with.
    public var token: UInt64
    public var events: ReadinessEvents

    public init(token: UInt64, events: ReadinessEvents) {
        self.token = token
        self.events = events
    }

    /// Whether a read has something to say: bytes, the end of the stream or
    /// an error (the read tells which).
    public var isReadable: Bool { !events.isDisjoint(with: [.readable, .hangUp, .error]) }
    public var isWritable: Bool { events.contains(.writable) }
}

/// The readiness layer under every loop of the project: the server's event
/// loops, the client library's I/O thread and the benchmark's load workers.
/// It says which of the registered sockets can be read or written without
/// blocking, and has a wake-up that other threads use to interrupt a wait.
/// Each user adds its own policy (tasks, timers, flushing), not another loop.
///
/// Two implementations: `EpollReadiness` (Linux only) and `PollReadiness`
/// (`poll(2)` and a pipe, which Apple platforms use and which also runs on
/// Linux, so that both are tested here). `ReadinessKind.configured` picks
/// one (`CHECKLIST_READINESS=poll` chooses the portable one).
///
/// Level-triggered: a socket that stays ready is reported by every wait.
/// Every method but `waker` is called by the thread that owns the object.
public protocol Readiness: AnyObject, SendableMetatype {
    /// Sets up the wait and its wake-up descriptor; a wait reports at most
    /// `capacity` sockets.
    init(capacity: Int) throws(SocketError)
    /// Wakes a `wait` in progress (or the next one) from any thread.
    var waker: ReadinessWaker { get }
    /// Starts watching `fd`; events for it carry `token` (any value but
    /// `UInt64.max`, which the wake-up may use).
    func register(_ fd: Int32, token: UInt64, interest: ReadinessInterest) throws(SocketError)
    /// Changes what a registered `fd` is watched for, and its token.
    func update(_ fd: Int32, token: UInt64, interest: ReadinessInterest) throws(SocketError)
    /// Stops watching `fd` (call before closing it). Unknown descriptors are ignored.
    func deregister(_ fd: Int32)
    /// Waits until a watched socket is ready, the waker was used or
    /// `timeout` passed (nil: no limit; zero: only looks), then calls
    /// `ready` for each ready socket. `ready` may register and deregister
    /// sockets; an event fetched for a socket deregistered meanwhile may
    /// still be reported (tokens tell a stale one apart). A wake-up is
    /// consumed here and reported to no one; an interrupted wait (`EINTR`)
    /// returns with no events.
    ///
    /// - Throws: `SocketError` when the wait itself fails.
    func wait(timeout: Duration?, _ ready: (ReadinessEvent) -> Void) throws(SocketError)
    /// Closes the descriptors of the wait; the object is not used after.
    func close()
}

/// Interrupts the wait of a `Readiness` from any thread: writes eight bytes
/// to its wake-up descriptor (an eventfd, whose counter they increment, or
/// the write end of a non-blocking pipe). A full pipe already holds a
/// wake-up, so a write that would block is dropped.
public struct ReadinessWaker: Sendable {
    public let fd: Int32

    public init(fd: Int32) { self.fd = fd }

    public func wake() {
        var one: UInt64 = 1
        while write(fd, &one, 8) < 0 && errno == EINTR {}
    }
}

extension Duration {
    /// Whole milliseconds, rounded up (a wait never ends early), clamped to `Int32`.
    var roundedUpMilliseconds: Int32 {
        if self <= .zero { return 0 }
        let (seconds, attoseconds) = components
        return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
