#if os(Linux)
import CLinux
import Glibc

/// The client's readiness layer on Linux: one epoll instance, and an eventfd
/// as the wake-up (registered with token `wakeToken`, which no socket gets).
final class EpollReadiness: Readiness {
    private let epoll: Int32
    private let wakeFD: Int32
    private static let wakeToken = UInt64.max
    private static let capacity = 128
    private let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: EpollReadiness.capacity)

    init() throws(ClientError) {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw .io("epoll_create1", errno: errno) }
        wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wakeFD >= 0 else {
            let code = errno
            Glibc.close(epoll)
            throw .io("eventfd", errno: code)
        }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = Self.wakeToken
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, wakeFD, &event) == 0 else {
            let code = errno
            Glibc.close(wakeFD)
            Glibc.close(epoll)
            throw .io("epoll_ctl ADD", errno: code)
        }
    }

    deinit { events.deallocate() }

    var waker: ReadinessWaker { ReadinessWaker(fd: wakeFD) }

    private static func mask(_ interest: ReadinessInterest) -> UInt32 {
        var mask = EPOLLRDHUP.rawValue
        if interest.contains(.readable) { mask |= EPOLLIN.rawValue }
        if interest.contains(.writable) { mask |= EPOLLOUT.rawValue }
        return mask
    }

    func register(_ fd: Int32, token: UInt64, interest: ReadinessInterest) throws(ClientError) {
        try control(EPOLL_CTL_ADD, "epoll_ctl ADD", fd, token, interest)
    }

    func update(_ fd: Int32, token: UInt64, interest: ReadinessInterest) throws(ClientError) {
        try control(EPOLL_CTL_MOD, "epoll_ctl MOD", fd, token, interest)
    }

    private func control(_ op: Int32, _ name: String, _ fd: Int32, _ token: UInt64,
                         _ interest: ReadinessInterest) throws(ClientError) {
        var event = epoll_event()
        event.events = Self.mask(interest)
        event.data.u64 = token
        guard epoll_ctl(epoll, op, fd, &event) == 0 else { throw .io(name, errno: errno) }
    }

    func deregister(_ fd: Int32) {
        var none = epoll_event()
        _ = epoll_ctl(epoll, EPOLL_CTL_DEL, fd, &none)
    }

    func wait(block: Bool, _ ready: (ReadinessEvent) -> Void) throws(ClientError) {
        let n = epoll_wait(epoll, events, Int32(Self.capacity), block ? -1 : 0)
        if n < 0 {
            if errno == EINTR { return }
            throw .io("epoll_wait", errno: errno)
        }
        for i in 0..<Int(n) {
            let event = events[i]
            if event.data.u64 == Self.wakeToken {
                var count: UInt64 = 0
                _ = Glibc.read(wakeFD, &count, 8)
                continue
            }
            // Errors and hang-ups are reported as readable: the read says which.
            let readable = event.events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0
            ready(ReadinessEvent(token: event.data.u64, readable: readable, writable: event.events & EPOLLOUT.rawValue != 0))
        }
    }

    func close() {
        Glibc.close(wakeFD)
        Glibc.close(epoll)
    }
}
#endif
