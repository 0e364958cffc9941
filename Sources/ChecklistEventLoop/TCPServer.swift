#if canImport(Glibc)
import Glibc
#endif
import ChecklistSocket
import ChecklistThreads
import Synchronization

/// A TCP server on an `EventLoopGroup`: it listens, spreads accepted
/// connections over the loops round-robin, and runs one `SocketConnectionHandler`
/// per connection. It knows nothing of the protocol.
///
/// Lifecycle: `group.start()`; `TCPServer(...)` (listening when it returns);
/// ...; `shutdown(timeout:)`; `group.shutdownAndJoin()`.
public final class TCPServer: Sendable {
    /// One listening socket: where, and whether it speaks TLS.
    public struct Listener: Sendable {
        public var host: String
        /// 0 picks a free port.
        public var port: UInt16
        /// Set: a TLS port (every connection starts with a handshake).
        public var tls: TLSListenerSettings?
        /// Set: a web port, whose connections begin as HTTP and may be
        /// upgraded to WebSocket (`Connection.webPortSettings`).
        public var webSocket: WebSocketSettings?

        public init(host: String, port: UInt16, tls: TLSListenerSettings? = nil, webSocket: WebSocketSettings? = nil) {
            self.host = host
            self.port = port
            self.tls = tls
            self.webSocket = webSocket
        }
    }

    /// A listener as bound.
    public struct BoundListener: Sendable, Hashable {
        public let host: String
        /// The real port (when 0 was asked for, the one picked).
        public let port: UInt16
        public let isTLS: Bool

        /// `"host:port"`; for log lines like `listening on ...`.
        public var address: String {
            host.contains(":") && !host.hasPrefix("[") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
    }

    /// The host the first listener is bound to, as given.
    public let host: String
    /// The first listener's bound port (the real one when 0 was asked for).
    public let boundPort: UInt16
    /// Every listener, in the order given.
    public let listeners: [BoundListener]
    public let group: EventLoopGroup
    public let limits: ConnectionLimits
    private let counters: ServerCounters
    private let contexts: [LoopBound<ServerLoopContext>]
    private let acceptors: [LoopBound<Acceptor>]
    private let shutdownStarted = Atomic<Bool>(false)

    /// Binds `host:port` and starts accepting on the group's first loop.
    ///
    /// - Parameter handlerFactory: called on the connection's loop thread for
    ///   each accepted connection (over-limit ones too: check
    ///   `connection.isOverConnectionLimit` to write a refusal in
    ///   `connectionActive`).
    public convenience init(
        host: String, port: UInt16, group: EventLoopGroup, limits: ConnectionLimits = ConnectionLimits(),
        handlerFactory: @escaping @Sendable (SocketConnection) -> any SocketConnectionHandler
    ) throws(SocketError) {
        try self.init(listeners: [Listener(host: host, port: port)], group: group, limits: limits,
                      handlerFactory: handlerFactory)
    }

    /// Binds every listener (at least one) and starts accepting on the
    /// group's first loop. The listeners share the limits: a TLS port and
    /// a plaintext port together serve at most `limits.maxConnections`.
    public init(
        listeners specs: [Listener], group: EventLoopGroup, limits: ConnectionLimits = ConnectionLimits(),
        handlerFactory: @escaping @Sendable (SocketConnection) -> any SocketConnectionHandler
    ) throws(SocketError) {
        precondition(!specs.isEmpty, "a TCPServer needs a listener")
        var sockets: [(fd: Int32, port: UInt16)] = []
        for spec in specs {
            do throws(SocketError) {
                sockets.append(try makeListeningSocket(host: spec.host, port: spec.port, backlog: limits.listenBacklog))
            } catch {
                for socket in sockets { closeSocket(socket.fd) }
                throw error
            }
        }
        listeners = zip(specs, sockets).map { BoundListener(host: $0.host, port: $1.port, isTLS: $0.tls != nil) }
        self.host = specs[0].host
        self.boundPort = sockets[0].port
        self.group = group
        self.limits = limits
        let counters = ServerCounters(loops: group.loops.count)
        self.counters = counters
        // Built here, then touched only by their loops (handed over through execute).
        let contexts = group.loops.map { loop in
            LoopBound(handingOver: ServerLoopContext(loop: loop, limits: limits, counters: counters,
                                                     makeHandler: handlerFactory), to: loop)
        }
        self.contexts = contexts
        let order = AcceptOrder()
        let acceptors = zip(specs, sockets).map { spec, socket in
            LoopBound(handingOver: Acceptor(fd: socket.fd, loop: group.loops[0], targets: contexts, counters: counters,
                                            limits: limits, tls: spec.tls, webSocket: spec.webSocket, order: order),
                           to: group.loops[0])
        }
        self.acceptors = acceptors
        for context in contexts {
            context.eventLoop.execute { context.value.start() }
        }
        for acceptor in acceptors {
            acceptor.eventLoop.execute { acceptor.value.start() }
        }
    }

    /// `"host:port"` of the first listener; for log lines like `listening on ...`.
    public var localAddress: String { listeners[0].address }

    /// Current counters. Safe from any thread.
    public var statistics: ServerStatistics { counters.snapshot() }

    /// How `shutdown` went.
    public struct ShutdownResult: Sendable, Hashable {
        /// Every connection finished sending and closed before the deadline.
        public var graceful: Bool
        /// Connections aborted when the deadline passed.
        public var abortedConnections: Int
    }

    /// Graceful shutdown, blocking the caller (never call it on a loop thread):
    /// stop accepting; on every loop tell each handler
    /// (`connectionShuttingDown`), then close its connection once its pending
    /// output is sent; wait for all to close until `timeout`, then abort the
    /// rest. The loops keep running; stop them with `group.shutdown()` after.
    /// A second call returns at once.
    @discardableResult
    public func shutdown(timeout: Duration = .seconds(10)) -> ShutdownResult {
        precondition(group.currentEventLoop == nil, "TCPServer.shutdown blocks: call it off the event loops")
        guard !shutdownStarted.exchange(true, ordering: .acquiringAndReleasing) else {
            return ShutdownResult(graceful: true, abortedConnections: 0)
        }
        let deadline = ContinuousClock.now + timeout
        let stoppedAccepting = Latch(count: acceptors.count)
        for acceptor in acceptors where !acceptor.eventLoop.execute({ acceptor.value.close(); stoppedAccepting.countDown() }) {
            stoppedAccepting.countDown()  // the loop stopped and closed it already
        }
        _ = stoppedAccepting.wait(until: deadline)

        let drained = Latch(count: contexts.count)
        for context in contexts {
            let queued = context.eventLoop.execute {
                context.value.beginShutdown(deadline: deadline) { drained.countDown() }
            }
            if !queued { drained.countDown() }
        }
        if drained.wait(until: deadline) {
            return ShutdownResult(graceful: true, abortedConnections: 0)
        }

        let aborted = Atomic<Int>(0)
        let forced = Latch(count: contexts.count)
        for context in contexts {
            let queued = context.eventLoop.execute {
                aborted.wrappingAdd(context.value.abortAll(), ordering: .relaxed)
                forced.countDown()
            }
            if !queued { forced.countDown() }
        }
        _ = forced.wait(until: .now + .seconds(5))
        return ShutdownResult(graceful: false, abortedConnections: aborted.load(ordering: .relaxed))
    }
}
