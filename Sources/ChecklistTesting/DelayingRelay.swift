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
/// **Faults:** `stall()` stops passing bytes while every socket stays open
/// (a hung proxy, a frozen peer: no RST, no FIN, and the kernels still
/// acknowledge what they receive) until `resume()`; `cutConnections()`
/// ends every relayed connection (both sides see it end) and goes on
/// accepting new ones.
public final class DelayingRelay: Sendable {
    /// The address clients connect to.
    public let host: String
    public let port: UInt16
    public let latency: Duration
    public let maximumConnections: Int
    public let bufferLimit: Int
    private let target: SocketAddress
    private let listenFD: Int32
    private let state = Mutex(Connections())
    /// True while stalled: the writers hold what they have.
    private let stalled = ConditionLock(false)

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

    /// Stops passing bytes, each way, on every relayed connection (and the
    /// ones accepted later) until `resume`; sockets stay open.
    public func stall() {
        stalled.withLock { $0 = true }
    }

    /// Passes bytes again after `stall`, in order, nothing lost.
    public func resume() {
        stalled.withLock { $0 = false }
        stalled.broadcast(.work)
    }

    /// Ends every relayed connection now (both directions shut down, so
    /// each side reads the end), and keeps accepting new ones.
    public func cutConnections() {
        state.withLock { state in
            for fd in state.open { try? shutdownSocket(fd, .both) }
        }
    }

    /// Stops accepting and cuts every relayed connection (both directions shut down).
    public func stop() {
        state.withLock { state in
            state.stopped = true
            for fd in state.open { try? shutdownSocket(fd, .both) }
        }
        try? shutdownSocket(listenFD, .both)  // wakes the blocking accept
    }

    private func acceptLoop() {
        while let accepted = try? acceptConnection(listenFD) {
            let admitted = state.withLock { state -> Bool in
                guard !state.stopped, state.active < maximumConnections else { return false }
                state.active += 1
                state.accepted += 1
                state.open.insert(accepted.fd)
                return true
            }
            guard admitted else {
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
            let queue = DelayQueue(latency: latency, limit: bufferLimit, stalled: stalled)
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
    /// The relay's stall switch: nothing is written while it is on.
    private let stalled: ConditionLock<Bool>

    init(latency: Duration, limit: Int, stalled: ConditionLock<Bool>) {
        self.stalled = stalled
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
            stalled.withLock(waitingOn: .work, until: { !$0 }) { _, _ in }
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
