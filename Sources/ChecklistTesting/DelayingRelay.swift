import ChecklistSocket
import ChecklistThreads
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A TCP relay that adds a fixed latency each way, for tests of a link with
/// a long round trip on a kernel without the `netem` qdisc: it accepts on
/// `listenHost` (127.0.0.1, or the test process's address on a
/// `NetworkLab` link), connects each client to the target, and hands every
/// chunk it reads to the other side `latency` after it arrived, in order.
/// A round trip through it takes at least twice `latency`.
///
/// **Threads:** one accepts; each relayed connection has a reader and a
/// writer per direction, which share that direction's queue under a
/// `ConditionLock`. **Bounds:** at most `maximumConnections` relayed at
/// once (more are closed on accept) and at most `bufferLimit` bytes queued
/// per direction (the reader waits for room, so TCP's flow control reaches
/// the sender). Half-closes pass through: a side's end of file reaches the
/// other side after the data before it.
///
/// **Faults** (the fault tests put one between a node and PostgreSQL, with
/// zero latency): `resetConnections()` cuts every relayed connection with
/// an RST and refuses new ones the same way; `stall()` stops passing bytes
/// while every socket stays open (the readers fill their queues up to
/// `bufferLimit`, then TCP's window closes: a hung proxy); `heal()` ends
/// either, and a stalled connection goes on with the bytes it held.
public final class DelayingRelay: Sendable {
    /// What the relay does with connections and bytes now.
    public enum Link: Sendable, Equatable {
        /// Relays as usual.
        case passing
        /// Holds every byte; sockets stay open, new connections are accepted.
        case stalled
        /// Resets new connections as they are accepted (after `resetConnections`).
        case refusing
    }

    /// The address clients connect to.
    public let host: String
    public let port: UInt16
    public let latency: Duration
    public let maximumConnections: Int
    public let bufferLimit: Int
    private let target: SocketAddress
    private let listenFD: Int32
    private let state = Mutex(Connections())
    /// The link's mode; the writers wait here while it is `.stalled`.
    private let link = ConditionLock(Link.passing)

    private struct Connections {
        var stopped = false
        var open: Set<Int32> = []
        var active = 0
        var accepted = 0
    }

    /// Starts relaying from `listenHost` (port 0: a free port) to `target`.
    public init(listenHost: String = "127.0.0.1", port: UInt16 = 0, to target: SocketAddress, latency: Duration,
                maximumConnections: Int = 32, bufferLimit: Int = 1 << 20) throws {
        let (fd, bound) = try makeListeningSocket(host: listenHost, port: port)
        try setNonBlocking(fd, false)
        host = listenHost
        self.port = bound
        self.target = target
        self.latency = latency
        self.maximumConnections = maximumConnections
        self.bufferLimit = bufferLimit
        listenFD = fd
        try NativeThread.start(name: "relay-accept") { [self] in acceptLoop() }.detach()
    }

    /// How many connections it has accepted and relayed so far.
    public var connectionsAccepted: Int { state.withLock { $0.accepted } }

    /// How many connections it relays now (at most `maximumConnections`).
    public var connectionsOpen: Int { state.withLock { $0.active } }

    /// The link's mode now.
    public var mode: Link { link.withLock { $0 } }

    /// Cuts every relayed connection with an RST (SO_LINGER 0) and resets
    /// each new one as it is accepted, until `heal()`.
    public func resetConnections() {
        link.withLock { $0 = .refusing }
        link.broadcast(.progress)
        state.withLock { state in
            for fd in state.open {
                Self.lingerZero(fd)
                try? shutdownSocket(fd, .both)
            }
        }
    }

    /// Stops passing bytes, in both directions of every connection, until
    /// `heal()`; sockets stay open and new connections are accepted.
    public func stall() {
        link.withLock { $0 = .stalled }
    }

    /// Passes bytes and accepts connections again.
    public func heal() {
        link.withLock { $0 = .passing }
        link.broadcast(.progress)
    }

    /// Makes `close(fd)` send an RST instead of a FIN.
    private static func lingerZero(_ fd: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }

    /// Stops accepting and cuts every relayed connection (both directions shut down).
    public func stop() {
        heal()
        state.withLock { state in
            state.stopped = true
            for fd in state.open { try? shutdownSocket(fd, .both) }
        }
        try? shutdownSocket(listenFD, .both)  // wakes the blocking accept
    }

    private func acceptLoop() {
        while let accepted = try? acceptConnection(listenFD) {
            let refused = link.withLock { $0 == .refusing }
            let admitted = !refused && state.withLock { state -> Bool in
                guard !state.stopped, state.active < maximumConnections else { return false }
                state.active += 1
                state.accepted += 1
                state.open.insert(accepted.fd)
                return true
            }
            guard admitted else {
                if refused { Self.lingerZero(accepted.fd) }
                closeSocket(accepted.fd)
                if state.withLock({ $0.stopped }) { break }
                continue
            }
            NativeThread.spawn(name: "relay-connect") { [self] in relay(accepted.fd) }.detach()
        }
        closeSocket(listenFD)
    }

    /// Connects `client` to the target and starts its four threads; the
    /// last of them to end closes both sockets.
    private func relay(_ client: Int32) {
        guard (try? setNonBlocking(client, false)) != nil, let backend = try? connectSocket(to: target) else {
            finish([client])
            return
        }
        let joined = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.open.insert(backend)
            return true
        }
        guard joined else { return finish([client, backend]) }
        let remaining = Atomic<Int>(4)
        let end: @Sendable () -> Void = { [self] in
            if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { finish([client, backend]) }
        }
        for (from, to) in [(client, backend), (backend, client)] {
            let queue = DelayQueue(latency: latency, limit: bufferLimit, link: link)
            NativeThread.spawn(name: "relay-read") {
                queue.fill(from: from)
                end()
            }.detach()
            NativeThread.spawn(name: "relay-write") {
                if !queue.drain(to: to) {
                    // The receiver is gone: end the whole connection.
                    try? shutdownSocket(from, .both)
                    try? shutdownSocket(to, .both)
                }
                end()
            }.detach()
        }
    }

    private func finish(_ fds: [Int32]) {
        state.withLock { state in
            state.active -= 1
            for fd in fds { state.open.remove(fd) }
        }
        for fd in fds { closeSocket(fd) }
    }
}

/// One direction of a relayed connection: chunks with the instant they are
/// due, filled by the reader and drained by the writer.
private final class DelayQueue: Sendable {
    private struct Pending {
        var chunks: [(due: UInt64, bytes: [UInt8])] = []
        var head = 0
        var queuedBytes = 0
        var ended = false
        var receiverGone = false
    }
    private let pending = ConditionLock(Pending())
    private let latency: UInt64
    private let limit: Int
    private let link: ConditionLock<DelayingRelay.Link>

    init(latency: Duration, limit: Int, link: ConditionLock<DelayingRelay.Link>) {
        self.link = link
        let (seconds, attoseconds) = latency.components
        self.latency = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
        self.limit = limit
    }

    /// Reads `fd` until its end (or an error), queueing each chunk due
    /// `latency` after it arrived; waits while `limit` bytes are queued.
    func fill(from fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let room = pending.withLock(waitingOn: .progress, until: { $0.queuedBytes < self.limit || $0.receiverGone }) { state, _ in
                !state.receiverGone
            }
            guard room, case .bytes(let n)? = try? buffer.withUnsafeMutableBytes({ try readSocket(fd, into: $0) }) else { break }
            let due = monotonicNanoseconds() + latency
            pending.withLock { state in
                state.chunks.append((due, Array(buffer[..<n])))
                state.queuedBytes += n
            }
            pending.signal(.work)
        }
        pending.withLock { $0.ended = true }
        pending.signal(.work)
    }

    /// Writes each chunk to `fd` when it is due; at the end of the input,
    /// half-closes `fd`. False when a write failed.
    func drain(to fd: Int32) -> Bool {
        while true {
            let next = pending.withLock(waitingOn: .work, until: { $0.head < $0.chunks.count || $0.ended }) { state, _ in
                state.head < state.chunks.count ? state.chunks[state.head] : nil
            }
            guard let (due, bytes) = next else {
                try? shutdownSocket(fd, .write)
                return true
            }
            Self.sleep(until: due)  // the latency itself, not a wait for readiness
            // A stalled link holds the bytes here (the sockets stay open).
            link.withLock(waitingOn: .progress, until: { $0 != .stalled }) { _, _ in }
            let written = (try? writeAll(fd, bytes)) != nil
            pending.withLock { state in
                state.head += 1
                state.queuedBytes -= bytes.count
                if !written { state.receiverGone = true }
                if state.head > 64 && state.head * 2 > state.chunks.count {
                    state.chunks.removeFirst(state.head)
                    state.head = 0
                }
            }
            pending.broadcast(.progress)
            if !written { return false }
        }
    }

    /// Sleeps until `deadline` (CLOCK_MONOTONIC nanoseconds).
    private static func sleep(until deadline: UInt64) {
        var at = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nil) == EINTR {}
    }
}
