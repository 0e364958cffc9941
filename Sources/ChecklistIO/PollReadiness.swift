#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ChecklistSocket

/// The portable readiness layer: `poll(2)` over the registered sockets, and
/// a non-blocking pipe as the wake-up (its read end is the first entry of
/// every poll). What Apple platforms use; it runs on Linux too, so every
/// loop's tests run over it there (`CHECKLIST_READINESS=poll`).
///
/// The entries handed to `poll` are kept in an array with an index from
/// descriptor to entry, so registering, updating and removing cost O(1)
/// (a removal moves the last entry into the gap) and a wait costs O(n),
/// as poll does anyway. Every ready socket is reported (`capacity` bounds
/// only epoll's batch). Timeouts are rounded up to whole milliseconds.
public final class PollReadiness: Readiness {
    private let wakeRead: Int32
    private let wakeWrite: Int32
    /// `pollfd`s handed to poll: the wake-up's read end first, then one per socket.
    private var entries: [pollfd]
    /// The token of each entry (the wake-up's is unused).
    private var tokens: [UInt64] = [0]
    /// Entry index by descriptor.
    private var index: [Int32: Int] = [:]
    /// Events found by the last wait, reported after the scan (reused).
    private var found: [ReadinessEvent] = []

    public init(capacity: Int = 256) throws(SocketError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw .lastError("pipe") }
        for fd in ends {
            let flags = fcntl(fd, F_GETFL)
            guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0, fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else {
                let error = SocketError.lastError("fcntl on the wake-up pipe")
                closeSocket(ends[0])
                closeSocket(ends[1])
                throw error
            }
        }
        wakeRead = ends[0]
        wakeWrite = ends[1]
        entries = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
    }

    public var waker: ReadinessWaker { ReadinessWaker(fd: wakeWrite) }

    private static func events(_ interest: ReadinessInterest) -> Int16 {
        var events: Int16 = 0
        if interest.contains(.readable) { events |= Int16(POLLIN) }
        if interest.contains(.writable) { events |= Int16(POLLOUT) }
        return events
    }

    public func register(_ fd: Int32, token: UInt64, interest: ReadinessInterest) throws(SocketError) {
        guard index[fd] == nil else { throw SocketError(code: EEXIST, operation: "poll register") }
        index[fd] = entries.count
        entries.append(pollfd(fd: fd, events: Self.events(interest), revents: 0))
        tokens.append(token)
    }

    public func update(_ fd: Int32, token: UInt64, interest: ReadinessInterest) throws(SocketError) {
        guard let i = index[fd] else { throw SocketError(code: ENOENT, operation: "poll update") }
        entries[i].events = Self.events(interest)
        tokens[i] = token
    }

    public func deregister(_ fd: Int32) {
        guard let i = index.removeValue(forKey: fd) else { return }
        let last = entries.count - 1
        if i != last {
            entries[i] = entries[last]
            tokens[i] = tokens[last]
            index[entries[i].fd] = i
        }
        entries.removeLast()
        tokens.removeLast()
    }

    public func wait(timeout: Duration?, _ ready: (ReadinessEvent) -> Void) throws(SocketError) {
        let milliseconds = timeout.map(\.roundedUpMilliseconds) ?? -1
        let n = poll(&entries, nfds_t(entries.count), milliseconds)
        if n < 0 {
            if errno == EINTR { return }
            throw .lastError("poll")
        }
        guard n > 0 else { return }
        if entries[0].revents != 0 { drainWakeUps() }
        for i in entries.indices.dropFirst() where entries[i].revents != 0 {
            let revents = entries[i].revents
            var events: ReadinessEvents = []
            if revents & Int16(POLLIN) != 0 { events.insert(.readable) }
            if revents & Int16(POLLOUT) != 0 { events.insert(.writable) }
            if revents & (Int16(POLLERR) | Int16(POLLNVAL)) != 0 { events.insert(.error) }
            if revents & Int16(POLLHUP) != 0 { events.insert(.hangUp) }
            found.append(ReadinessEvent(token: tokens[i], events: events))
        }
        // Reported after the scan: `ready` may register and deregister sockets.
        for event in found { ready(event) }
        found.removeAll(keepingCapacity: true)
    }

    private func drainWakeUps() {
        var sink: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        while read(wakeRead, &sink, MemoryLayout.size(ofValue: sink)) > 0 {}
    }

    public func close() {
        closeSocket(wakeRead)
        closeSocket(wakeWrite)
    }
}
