#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ChecklistSocket

/// Waits until the one socket `fd` is ready for `interest` or `deadline`
/// passes (nil: no limit): the wait of a blocking user of a non-blocking
/// socket (the client's connect and TLS handshake, the blocking frame
/// client), on `poll(2)`, which every platform has. Returns what is ready
/// (errors and hang-ups included whatever the interest), or nil at the
/// deadline. An interrupted wait (`EINTR`) waits on.
///
/// - Throws: `SocketError` when `poll` itself fails.
public func waitForSocket(_ fd: Int32, _ interest: ReadinessInterest,
                          deadline: ContinuousClock.Instant?) throws(SocketError) -> ReadinessEvents? {
    var events: Int16 = 0
    if interest.contains(.readable) { events |= Int16(POLLIN) }
    if interest.contains(.writable) { events |= Int16(POLLOUT) }
    while true {
        var milliseconds: Int32 = -1
        if let deadline {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return nil }
            milliseconds = left.roundedUpMilliseconds
        }
        var pfd = pollfd(fd: fd, events: events, revents: 0)
        let n = poll(&pfd, 1, milliseconds)
        if n < 0 {
            if errno == EINTR { continue }
            throw .lastError("poll")
        }
        guard n > 0 else { continue }  // the deadline is checked above
        var ready: ReadinessEvents = []
        if pfd.revents & Int16(POLLIN) != 0 { ready.insert(.readable) }
        if pfd.revents & Int16(POLLOUT) != 0 { ready.insert(.writable) }
        if pfd.revents & Int16(POLLHUP) != 0 { ready.insert(.hangUp) }
        if pfd.revents & Int16(POLLERR | POLLNVAL) != 0 { ready.insert(.error) }
        return ready
    }
}
