import ChecklistSocket
import ChecklistTLS

/// A server's state on one loop: the connections that loop owns, the tick
/// timer, and the shutdown bookkeeping. Loop thread only (it is reached
/// through a `LoopBound`); not Sendable.
package final class ServerLoopContext {
    package let loop: EventLoop
    package let limits: ConnectionLimits
    package let counters: ServerCounters
    /// This loop's byte counters.
    package let traffic: ServerCounters.Traffic
    private let makeHandler: @Sendable (SocketConnection) -> any SocketConnectionHandler
    private var connections: [UInt64: SocketConnection] = [:]
    private var tickTimer: UInt64?
    private var shuttingDown = false
    /// Called once when shutting down and the last connection has closed.
    private var onDrained: (() -> Void)?
    /// Where TLS connections of this loop read ciphertext into and take
    /// it out of their sessions, one call at a time: one buffer per loop
    /// rather than one per connection.
    package let tlsScratch = UnsafeMutableRawBufferPointer.allocate(byteCount: ServerLoopContext.tlsScratchBytes, alignment: 16)
    /// A few TLS records' worth (a record holds at most 16 KiB of plaintext).
    package static let tlsScratchBytes = 64 << 10

    package init(loop: EventLoop, limits: ConnectionLimits, counters: ServerCounters,
         makeHandler: @escaping @Sendable (SocketConnection) -> any SocketConnectionHandler) {
        self.loop = loop
        self.limits = limits
        self.counters = counters
        self.traffic = counters.traffic[loop.index]
        self.makeHandler = makeHandler
    }

    deinit {
        tlsScratch.deallocate()
    }

    package var connectionCount: Int { connections.count }

    package func start() {
        let interval = limits.tickInterval
        tickTimer = loop.addTimer(after: interval, repeating: interval) { [self] in tick() }
    }

    /// Takes over an accepted descriptor (already counted by the acceptor):
    /// registers it, makes its handler, and tells the handler it is active.
    /// On a TLS port (`tls` set) the handler is told only once the handshake is done.
    package func adopt(fd: Int32, peer: String, id: UInt64, overLimit: Bool, tls: TLSListenerSettings? = nil,
                       webSocket: WebSocketSettings? = nil) {
        guard !shuttingDown else {
            closeSocket(fd)
            uncount(overLimit: overLimit)
            return
        }
        var transport: TLSTransport?
        if let tls {
            do throws(TLSError) {
                transport = TLSTransport(session: try TLSSession(server: tls.context.current, limits: tls.sessionLimits),
                                         handshakeTimeout: tls.handshakeTimeout)
            } catch {
                closeSocket(fd)  // out of memory in OpenSSL
                uncount(overLimit: overLimit)
                return
            }
        }
        let connection = SocketConnection(fd: fd, id: id, peer: peer, overLimit: overLimit, context: self, tls: transport)
        connection.webPortSettings = webSocket
        do throws(SocketError) {
            try loop.register(fd, interest: EpollMask.input, handler: connection)
        } catch {
            closeSocket(fd)
            uncount(overLimit: overLimit)
            return
        }
        connections[id] = connection
        connection.handler = makeHandler(connection)
        if transport == nil { connection.activate() }
    }

    /// Bookkeeping when a connection's descriptor has been closed.
    package func connectionDidClose(_ connection: SocketConnection) {
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        uncount(overLimit: connection.isOverConnectionLimit)
        if shuttingDown && connections.isEmpty { drained() }
    }

    private func uncount(overLimit: Bool) {
        if overLimit {
            counters.rejectionsInFlight.wrappingSubtract(1, ordering: .relaxed)
        } else {
            counters.connectionsOpen.wrappingSubtract(1, ordering: .relaxed)
        }
    }

    private func tick() {
        let now = loop.now
        // A snapshot: ticks may close connections, which edits the table.
        for connection in Array(connections.values) {
            connection.tick(now: now)
        }
    }

    /// Graceful shutdown of this loop's connections: each handler is told,
    /// then its connection is closed after its output is sent (by `deadline`).
    /// `onDrained` runs once no connection is left.
    package func beginShutdown(deadline: ContinuousClock.Instant, onDrained: @escaping () -> Void) {
        guard !shuttingDown else { return }
        shuttingDown = true
        self.onDrained = onDrained
        for connection in Array(connections.values) where connection.isOpen {
            // One still in its TLS handshake has no handler session to tell: just closed.
            if connection.isActive { connection.callHandler { $0.connectionShuttingDown(connection) } }
            connection.close(deadline: deadline)
        }
        if connections.isEmpty { drained() }
    }

    /// Aborts every connection left; returns how many there were.
    package func abortAll() -> Int {
        let remaining = Array(connections.values)
        for connection in remaining { connection.abort() }
        return remaining.count
    }

    private func drained() {
        if let tickTimer { loop.removeTimer(tickTimer) }
        tickTimer = nil
        let onDrained = self.onDrained
        self.onDrained = nil
        onDrained?()
    }
}
