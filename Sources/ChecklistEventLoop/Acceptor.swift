#if canImport(Glibc)
import Glibc
#endif
import ChecklistSocket

/// The listening socket, registered on the group's first loop.
///
/// One acceptor rather than an `SO_REUSEPORT` listener per loop: connections
/// are long-lived (accepting is rare next to request traffic), round-robin
/// gives an exactly even spread where the kernel's hash can be lumpy with few
/// clients, and the connection limit is decided in one place. Accepted
/// descriptors are handed to their loop with `execute`; the `SocketConnection`
/// object is only ever created on the loop that owns it.
///
/// A server with several listeners (a TLS port and a plaintext one) has
/// one acceptor per listening socket, all on the first loop, sharing one
/// `AcceptOrder`: one connection limit, one id sequence, one round-robin.
final class Acceptor: Selectable {
    let fd: Int32
    let loop: EventLoop
    private let targets: [LoopBound<ServerLoopContext>]
    private let counters: ServerCounters
    private let limits: ConnectionLimits
    /// Set on a TLS port.
    private let tls: TLSListenerSettings?
    /// Set on a web port.
    private let webSocket: WebSocketSettings?
    private let order: AcceptOrder
    private enum State { case idle, listening, paused, closed }
    private var state = State.idle

    /// Over-limit connections being turned away at once, at most; more are
    /// closed without a word (a flood must not exhaust descriptors).
    static let maxRejectionsInFlight = 64
    /// Accepts per wake-up, so the loop's other connections get their turn
    /// (level-triggered: the kernel reports the listener again if more wait).
    static let acceptBatch = 128

    init(fd: Int32, loop: EventLoop, targets: [LoopBound<ServerLoopContext>],
         counters: ServerCounters, limits: ConnectionLimits, tls: TLSListenerSettings?,
         webSocket: WebSocketSettings? = nil, order: AcceptOrder) {
        self.fd = fd
        self.webSocket = webSocket
        self.tls = tls
        self.order = order
        self.loop = loop
        self.targets = targets
        self.counters = counters
        self.limits = limits
    }

    func start() {
        guard state == .idle || state == .paused else { return }
        do throws(SocketError) {
            try loop.register(fd, interest: EpollMask.input, handler: self)
            state = .listening
        } catch {
            // Cannot happen for a fresh descriptor short of kernel memory
            // exhaustion; try again shortly rather than never listen.
            pause()
        }
    }

    func handleEvents(_ events: UInt32) {
        for _ in 0..<Self.acceptBatch {
            guard state == .listening else { return }
            let accepted: (fd: Int32, peer: SocketAddress?)?
            do throws(SocketError) {
                accepted = try acceptConnection(fd)
            } catch {
                // EMFILE/ENFILE/ENOBUFS/ENOMEM: the pending connection stays
                // queued and level-triggered epoll would report it again at
                // once, spinning. Stop listening briefly instead.
                pause()
                return
            }
            guard let accepted else { return }
            dispatch(fd: accepted.fd, peer: accepted.peer?.description ?? "?")
        }
    }

    private func dispatch(fd connectionFD: Int32, peer: String) {
        try? setNoDelay(connectionFD)
        let overLimit = counters.connectionsOpen.load(ordering: .relaxed) >= limits.maxConnections
        if overLimit {
            counters.connectionsRejected.wrappingAdd(1, ordering: .relaxed)
            if counters.rejectionsInFlight.load(ordering: .relaxed) >= Self.maxRejectionsInFlight {
                closeSocket(connectionFD)
                return
            }
            counters.rejectionsInFlight.wrappingAdd(1, ordering: .relaxed)
        } else {
            // Counted here, on the only thread that admits, so the limit holds
            // exactly; loops subtract when connections close.
            counters.connectionsOpen.wrappingAdd(1, ordering: .relaxed)
            counters.connectionsTotal.wrappingAdd(1, ordering: .relaxed)
        }
        let id = order.nextID
        order.nextID += 1
        let target = targets[order.nextTarget]
        order.nextTarget = (order.nextTarget + 1) % targets.count
        let tls = self.tls
        let webSocket = self.webSocket
        if target.eventLoop === loop {
            target.value.adopt(fd: connectionFD, peer: peer, id: id, overLimit: overLimit, tls: tls, webSocket: webSocket)
        } else {
            let handedOver = target.eventLoop.execute {
                target.value.adopt(fd: connectionFD, peer: peer, id: id, overLimit: overLimit, tls: tls, webSocket: webSocket)
            }
            if !handedOver {  // that loop has stopped
                closeSocket(connectionFD)
                if overLimit {
                    counters.rejectionsInFlight.wrappingSubtract(1, ordering: .relaxed)
                } else {
                    counters.connectionsOpen.wrappingSubtract(1, ordering: .relaxed)
                }
            }
        }
    }

    private func pause() {
        guard state == .listening || state == .idle else { return }
        if state == .listening { loop.deregister(fd) }
        state = .paused
        loop.addTimer(after: .milliseconds(100), repeating: nil) { [self] in
            if state == .paused { start() }
        }
    }

    /// Stops accepting and closes the listening socket.
    func close() {
        guard state != .closed else { return }
        if state == .listening { loop.deregister(fd) }
        state = .closed
        closeSocket(fd)
    }

    func loopWillClose() { close() }
}

/// The id and loop of the next accepted connection, shared by a server's
/// acceptors (all on its first loop, which alone touches this).
final class AcceptOrder {
    var nextID: UInt64 = 1
    var nextTarget = 0
}
