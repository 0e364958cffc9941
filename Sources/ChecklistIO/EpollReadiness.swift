#if os(Linux)
import CLinux
import Glibc
import ChecklistSocket

/// The readiness layer on Linux: one epoll instance, and an eventfd as the
/// wake-up (registered with token `UInt64.max`, which no socket gets).
/// Waits with a timeout finer than a millisecond use `epoll_pwait2` (the
/// benchmark's open loop paces requests in microseconds), falling back to
/// `epoll_wait` rounded up where the kernel lacks it.
public final class EpollReadiness: Readiness {
    private let epoll: Int32
    private let wakeFD: Int32
    private static let wakeToken = UInt64.max
    private let events: UnsafeMutableBufferPointer<epoll_event>
    private var hasPwait2 = true

    public init(capacity: Int = 256) throws(SocketError) {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw .lastError("epoll_create1") }
        wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wakeFD >= 0 else {
            let error = SocketError.lastError("eventfd")
            closeSocket(epoll)
            throw error
        }
        events = .allocate(capacity: max(capacity, 1))
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = Self.wakeToken
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, wakeFD, &event) == 0 else {
            let error = SocketError.lastError("epoll_ctl ADD")
            events.deallocate()
            closeSocket(wakeFD)
            closeSocket(epoll)
            throw error
        }
    }

    deinit { events.deallocate() }

    public var waker: ReadinessWaker { ReadinessWaker(fd: wakeFD) }

    private static func mask(_ interest: ReadinessInterest) -> UInt32 {
        var mask: UInt32 = 0
        if interest.contains(.readable) { mask |= EPOLLIN.rawValue }
        if interest.contains(.writable) { mask |= EPOLLOUT.rawValue }
        return mask
    }

    public func register(_ fd: Int32, token: UInt64, interest: ReadinessInterest) throws(SocketError) {
        try control(EPOLL_CTL_ADD, "epoll_ctl ADD", fd, token, interest)
    }

    public func update(_ fd: Int32, token: UInt64, interest: ReadinessInterest) throws(SocketError) {
        try control(EPOLL_CTL_MOD, "epoll_ctl MOD", fd, token, interest)
    }

    private func control(_ op: Int32, _ name: String, _ fd: Int32, _ token: UInt64,
                         _ interest: ReadinessInterest) throws(SocketError) {
        var event = epoll_event()
        event.events = Self.mask(interest)
        event.data.u64 = token
        guard epoll_ctl(epoll, op, fd, &event) == 0 else { throw .lastError(name) }
    }

    public func deregister(_ fd: Int32) {
        var none = epoll_event()
        _ = epoll_ctl(epoll, EPOLL_CTL_DEL, fd, &none)
    }

    public func wait(timeout: Duration?, _ ready: (ReadinessEvent) -> Void) throws(SocketError) {
        let n = waitForEvents(timeout)
        if n < 0 {
            if errno == EINTR { return }
            throw .lastError("epoll_wait")
        }
        for i in 0..<Int(n) {
            let event = events[i]
            if event.data.u64 == Self.wakeToken {
                var count: UInt64 = 0
                _ = Glibc.read(wakeFD, &count, 8)
                continue
            }
            var found: ReadinessEvents = []
            if event.events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue) != 0 { found.insert(.readable) }
            if event.events & EPOLLOUT.rawValue != 0 { found.insert(.writable) }
            if event.events & EPOLLERR.rawValue != 0 { found.insert(.error) }
            if event.events & EPOLLHUP.rawValue != 0 { found.insert(.hangUp) }
            ready(ReadinessEvent(token: event.data.u64, events: found))
        }
    }

    private func waitForEvents(_ timeout: Duration?) -> Int32 {
        guard let timeout else { return epoll_wait(epoll, events.baseAddress, Int32(events.count), -1) }
        if timeout <= .zero { return epoll_wait(epoll, events.baseAddress, Int32(events.count), 0) }
        let (seconds, attoseconds) = timeout.components
        if hasPwait2 && attoseconds % 1_000_000_000_000_000 != 0 {
            var spec = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
            let n = epoll_pwait2(epoll, events.baseAddress, Int32(events.count), &spec, nil)
            if n >= 0 || errno != ENOSYS { return n }
            hasPwait2 = false
        }
        return epoll_wait(epoll, events.baseAddress, Int32(events.count), timeout.roundedUpMilliseconds)
    }

    public func close() {
        closeSocket(wakeFD)
        closeSocket(epoll)
    }
}
#endif
