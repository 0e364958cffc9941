#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The client's portable readiness layer: `poll(2)` over the registered
/// sockets, and a non-blocking pipe as the wake-up (its read end is the
/// first entry of every poll). What Apple platforms use; it runs on Linux
/// too, so the client's tests run over it there (`CHECKLIST_READINESS=poll`).
///
/// A client has few connections, so the linear scans of `poll` cost
/// nothing worth an index; the registrations are kept in the order they
/// came, in the array handed to `poll`.
final class PollReadiness: Readiness {
    private let wakeRead: Int32
    private let wakeWrite: Int32
    /// `pollfd`s handed to poll: the wake-up's read end first, then one per socket.
    private var entries: [pollfd]
    /// The token of each entry (the wake-up's is unused).
    private var tokens: [UInt64] = [0]

    init() throws(ClientError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw .io("pipe", errno: errno) }
        for fd in ends {
            let flags = fcntl(fd, F_GETFL)
            guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0, fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else {
                let code = errno
                _ = ends.map { fd in Self.closeDescriptor(fd) }
                throw .io("fcntl on the wake-up pipe", errno: code)
            }
        }
        wakeRead = ends[0]
        wakeWrite = ends[1]
        entries = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
    }

    var waker: ReadinessWaker { ReadinessWaker(fd: wakeWrite) }

    private static func events(_ interest: ReadinessInterest) -> Int16 {
        var events: Int16 = 0
        if interest.contains(.readable) { events |= Int16(POLLIN) }
        if interest.contains(.writable) { events |= Int16(POLLOUT) }
        return events
    }

    func register(_ fd: Int32, token: UInt64, interest: ReadinessInterest) throws(ClientError) {
        guard !entries.contains(where: { $0.fd == fd }) else { throw .io("poll register", errno: EEXIST) }
        entries.append(pollfd(fd: fd, events: Self.events(interest), revents: 0))
        tokens.append(token)
    }

    func update(_ fd: Int32, token: UInt64, interest: ReadinessInterest) throws(ClientError) {
        guard let i = entries.indices.dropFirst().first(where: { entries[$0].fd == fd }) else {
            throw .io("poll update", errno: ENOENT)
        }
        entries[i].events = Self.events(interest)
        tokens[i] = token
    }

    func deregister(_ fd: Int32) {
        guard let i = entries.indices.dropFirst().first(where: { entries[$0].fd == fd }) else { return }
        entries.remove(at: i)
        tokens.remove(at: i)
    }

    func wait(block: Bool, _ ready: (ReadinessEvent) -> Void) throws(ClientError) {
        let n = poll(&entries, nfds_t(entries.count), block ? -1 : 0)
        if n < 0 {
            if errno == EINTR { return }
            throw .io("poll", errno: errno)
        }
        guard n > 0 else { return }
        if entries[0].revents != 0 { drainWakeUps() }
        // Hang-ups and errors are reported as readable: the read says which.
        let hangup = Int16(POLLHUP) | Int16(POLLERR) | Int16(POLLNVAL)
        var found: [ReadinessEvent] = []
        for i in entries.indices.dropFirst() where entries[i].revents != 0 {
            let revents = entries[i].revents
            found.append(ReadinessEvent(token: tokens[i], readable: revents & (Int16(POLLIN) | hangup) != 0,
                                        writable: revents & Int16(POLLOUT) != 0))
        }
        // Reported after the scan: `ready` may deregister sockets.
        for event in found { ready(event) }
    }

    private func drainWakeUps() {
        var sink: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        while read(wakeRead, &sink, MemoryLayout.size(ofValue: sink)) > 0 {}
    }

    func close() {
        Self.closeDescriptor(wakeRead)
        Self.closeDescriptor(wakeWrite)
    }

    private static func closeDescriptor(_ fd: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #else
        _ = Darwin.close(fd)
        #endif
    }
}
