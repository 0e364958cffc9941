#if canImport(Glibc)
import Glibc
#endif
import CLinux
import ChecklistSocket

/// Readiness bits used with epoll, as plain `UInt32` masks.
enum EpollMask {
    static let input = EPOLLIN.rawValue
    static let output = EPOLLOUT.rawValue
    static let error = EPOLLERR.rawValue
    static let hangUp = EPOLLHUP.rawValue
}

/// An epoll instance (owned descriptor, closed on deinit).
///
/// Level-triggered throughout: a connection is read once per wake-up and the
/// kernel reports it again if bytes remain, which gives every ready socket on
/// a loop a turn per iteration (fairness) without per-connection "still
/// readable" bookkeeping. The price is an `epoll_ctl(MOD)` when output
/// interest or back-pressure changes, which is rare.
///
/// Each registration carries a token `generation << 32 | fd`, so an event that
/// was already fetched for a descriptor closed (and maybe reused) earlier in
/// the same batch is recognised as stale and dropped.
struct Epoll: ~Copyable {
    let fd: Int32

    init() throws(SocketError) {
        fd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard fd >= 0 else { throw .lastError("epoll_create1") }
    }

    deinit { closeSocket(fd) }

    func add(_ target: Int32, interest: UInt32, token: UInt64) throws(SocketError) {
        try control(EPOLL_CTL_ADD, target, interest, token, "epoll_ctl ADD")
    }

    func modify(_ target: Int32, interest: UInt32, token: UInt64) throws(SocketError) {
        try control(EPOLL_CTL_MOD, target, interest, token, "epoll_ctl MOD")
    }

    /// Removes `target`; errors are ignored (closing the descriptor removes it anyway).
    func remove(_ target: Int32) {
        var event = epoll_event()
        _ = epoll_ctl(fd, EPOLL_CTL_DEL, target, &event)
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever) and returns how many
    /// entries of `events` were filled; 0 after a timeout or a signal.
    func wait(into events: UnsafeMutableBufferPointer<epoll_event>, timeoutMilliseconds: Int32) -> Int {
        let n = epoll_wait(fd, events.baseAddress, Int32(events.count), timeoutMilliseconds)
        if n < 0 {
            precondition(errno == EINTR, "epoll_wait failed: errno \(errno)")
            return 0
        }
        return Int(n)
    }

    private func control(_ op: Int32, _ target: Int32, _ interest: UInt32, _ token: UInt64, _ name: String) throws(SocketError) {
        var event = epoll_event()
        event.events = interest
        event.data.u64 = token
        guard epoll_ctl(fd, op, target, &event) == 0 else { throw .lastError(name) }
    }
}

/// A non-blocking eventfd used to wake a loop out of `epoll_wait`.
struct EventFD: ~Copyable {
    let fd: Int32

    init() throws(SocketError) {
        fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard fd >= 0 else { throw .lastError("eventfd") }
    }

    deinit { closeSocket(fd) }

    /// Makes the descriptor readable (adds 1 to its counter).
    func signal() {
        var one: UInt64 = 1
        while write(fd, &one, 8) < 0 && errno == EINTR {}
    }

    /// Resets the counter so the descriptor is no longer readable.
    func drain() {
        var value: UInt64 = 0
        while read(fd, &value, 8) < 0 && errno == EINTR {}
    }
}
