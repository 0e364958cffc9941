// ChecklistServer: the protocol server over a store. Requests come in on
// ChecklistEventLoop's sockets and leave as answers; everything between
// (sessions, live sync, access control, metrics, transfers, the storage
// seam) is here.
//
// The connection types, from the socket up (the first three live in
// ChecklistEventLoop, which knows no protocol):
//
//   SocketConnection         one accepted socket on its event loop: buffers,
//                            back-pressure, TLS, close and linger.
//   SocketConnectionHandle   a `Sendable` reference to one, for other threads.
//   SocketConnectionHandler  what a server plugs in per connection.
//   ProtocolHandler          this server's `SocketConnectionHandler`: finds
//                            the frames, hands them to the session, and
//                            carries out on the socket what `ProtocolState`
//                            says (pipelining, answers held for the log,
//                            snapshot transfers, parked requests, timeouts,
//                            the goodbye). The only one that does I/O.
//   ProtocolState            the connection's state machine, free of I/O
//                            (held by the session): handshake, awaiting
//                            HELLO, ready, parked on a load, awaiting a
//                            transfer, draining, closing; each event
//                            returns the action to carry out.
//   ProtocolSession          request handling for one connection, free of
//                            I/O: decodes a frame, checks HELLO and its
//                            credential, writes the answer, and returns a
//                            `RequestOutcome` saying what the answer is.
//   ParkedRequest            a decoded request waiting for database reads
//                            (PostgreSQL's list cache), resumed by the session.
//   ConnectionPolicy         the server-wide limits every connection applies.
//   ConnectionTransfers      a connection's snapshot work on transfer workers.
//
// Not the server's: `ChecklistConnection` is the client library's
// connection (ChecklistClient).

import ChecklistStorage
import ChecklistLog
import ChecklistEventLoop
import ChecklistModel
import ChecklistSnapshot
import ChecklistSocket
import ChecklistStore
import ChecklistWebSocket
import ChecklistWire

/// A running checklist server: event loops, the listening socket and the
/// protocol sessions over one store.
public final class ChecklistServer: Sendable {
    public let configuration: ServerConfiguration
    public let store: Store
    /// The figures STATS and the metrics endpoint report.
    public let metrics: ServerMetrics
    /// The server's event log (stderr, `level=... event=...` lines).
    public let log: ServerLog
    private let group: EventLoopGroup
    private let tcp: TCPServer
    private let metricsHTTP: TCPServer?
    /// The threads that work on EXPORT and IMPORT chunks.
    private let transferWorkers: TransferWorkers
    private let importInflaters: InflateWorkers?
    /// Event-loop threads serving connections.
    public let threadCount: Int
    /// `RLIMIT_NOFILE` (soft) after raising it at start.
    public let descriptorLimit: UInt64

    /// Live sync, when the server was given a hub.
    public let liveSync: SubscriptionHub?
    /// Where the data is kept (log, snapshots), when the server has it kept.
    public let storage: (any ServerStorage)?

    /// Starts serving; listening when it returns.
    ///
    /// - Parameter liveSync: the hub the store's `onCommit` publishes to
    ///   (see `CommitFanout`); without one, SUBSCRIBE and CHANGES_SINCE are
    ///   answered `BAD_STATE`.
    ///   - storage: where the store's commits go; when it says so
    ///     (`--fsync always`), answers to changes are held until they are
    ///     durable. Its status is reported by STATS and /metrics.
    ///
    /// `ChecklistService` makes the store, its storage and live sync in the
    /// right order and starts the server over them.
    public init(configuration: ServerConfiguration, store: Store, liveSync: SubscriptionHub? = nil,
                storage: (any ServerStorage)? = nil) throws {
        self.configuration = configuration
        self.store = store
        self.liveSync = liveSync
        self.storage = storage
        let threads = configuration.threads > 0 ? configuration.threads : EventLoopGroup.defaultThreadCount
        threadCount = threads
        let log = ServerLog(level: configuration.logLevel)
        self.log = log
        descriptorLimit = Self.raiseDescriptorLimit(for: configuration, log: log)
        group = try EventLoopGroup(threads: threads)
        group.start()
        let metrics = ServerMetrics(loops: threads, store: store, hasTLSPort: configuration.tls != nil,
                                    hasWebPort: configuration.webPort != nil)
        self.metrics = metrics
        store.setQuotas(configuration.quotas)
        let dispatcher = RequestDispatcher(store: store, serverName: configuration.serverName, limits: configuration.limits,
                                           metrics: metrics, liveSync: liveSync, snapshots: configuration.snapshots, log: log,
                                           cache: storage?.listCache, rateLimit: configuration.rateLimit,
                                           batchesPatches: storage?.takesPatchBatches ?? true)
        transferWorkers = dispatcher.snapshots.workers
        importInflaters = dispatcher.snapshots.inflaters
        // A single answer may be as large as a frame: the output limit must hold it.
        let maxOutput = max(configuration.maxOutputBytes, Int(configuration.limits.maxFrameBytes) + 64 * 1024)
        let policy = ConnectionPolicy(idleTimeout: configuration.idleTimeout, maxInFlight: max(1, configuration.maxInFlight),
                                      slowRequest: configuration.slowRequestThreshold, maxOutputBytes: maxOutput,
                                      maxConnections: configuration.maxConnections, log: log, metrics: metrics)
        let limits = ConnectionLimits(maxConnections: configuration.maxConnections,
                                      maxInputBytes: Int(configuration.limits.maxFrameBytes) + 64 * 1024,
                                      outputHighWaterMark: min(configuration.outputHighWaterBytes, maxOutput),
                                      outputLowWaterMark: min(configuration.outputHighWaterBytes, maxOutput) / 4,
                                      maxOutputBytes: maxOutput)
        let protocolLimits = configuration.limits
        let highWater = min(configuration.outputHighWaterBytes, maxOutput)
        let accessControl = configuration.accessControl
        let tcp: TCPServer
        do {
            var listeners = [TCPServer.Listener(host: configuration.host, port: configuration.port, tls: configuration.tls)]
            if configuration.tls != nil, let plainPort = configuration.plainPort {
                listeners.append(TCPServer.Listener(host: configuration.plainHost, port: plainPort))
            }
            if let webPort = configuration.webPort {
                listeners.append(TCPServer.Listener(host: configuration.host, port: webPort, tls: configuration.tls,
                                                    webSocket: configuration.webSocket))
            }
            let origins = WebSocketHandshake.OriginPolicy(allowed: configuration.webAllowedOrigins)
            // One group commit per loop, when PATCHes are batched at all.
            let commitGroups = dispatcher.batchesPatches ? group.loops.map { loop in
                LoopBound(handingOver: PatchCommitGroup(loop: loop, store: store), to: loop)
            } : nil
            // One set of durability waiters per loop, when answers wait at all.
            let waitingStorage = storage?.answersWaitForDurability == true ? storage : nil
            let durabilityWaiters = waitingStorage.map { [loops = group.loops] storage in
                loops.map { loop in LoopBound(handingOver: DurabilityWaiters(loop: loop, storage: storage), to: loop) }
            }
            @Sendable func protocolHandler(_ connection: SocketConnection) -> any SocketConnectionHandler {
                ProtocolHandler(dispatcher: dispatcher, limits: protocolLimits, outputHighWater: highWater,
                                accessControl: accessControl, policy: policy, loopIndex: connection.eventLoop.index,
                                storage: storage, commitGroup: commitGroups?[connection.eventLoop.index],
                                durabilityWaiters: durabilityWaiters?[connection.eventLoop.index])
            }
            tcp = try TCPServer(listeners: listeners, group: group, limits: limits) { connection in
                if let settings = connection.webPortSettings {
                    return WebPortHandler(settings: settings, origins: origins, makeProtocolHandler: protocolHandler)
                }
                return protocolHandler(connection)
            }
        } catch {
            group.shutdownAndJoin()
            throw error
        }
        self.tcp = tcp
        metrics.setConnectionStatisticsProvider { tcp.statistics }
        if let liveSync { metrics.setSyncStatusProvider { liveSync.syncStatus } }
        if let storage { metrics.setDurabilityStatusProvider { storage.status } }
        if let cache = storage?.listCache { metrics.setCacheStatusProvider { cache.status } }
        if let accessControl {
            accessControl.refusals.attach(log)
            metrics.setAccessRefusalsProvider { accessControl.refusals.snapshot }
        }
        if let metricsPort = configuration.metricsPort {
            // Scrapes are rare and short: a few at a time is plenty.
            let httpLimits = ConnectionLimits(maxConnections: 16, maxInputBytes: MetricsHTTPHandler.maxRequestBytes,
                                              closeTimeout: .seconds(5), lingerTimeout: .seconds(1))
            do {
                metricsHTTP = try TCPServer(host: configuration.metricsHost, port: metricsPort, group: group,
                                            limits: httpLimits) { _ in MetricsHTTPHandler(metrics: metrics) }
            } catch {
                tcp.shutdown(timeout: .seconds(1))
                group.shutdownAndJoin()
                throw error
            }
        } else {
            metricsHTTP = nil
        }
    }

    /// `HOST:PORT` actually bound (the TLS port, when there is one).
    public var localAddress: String { tcp.localAddress }

    /// `HOST:PORT` of the plaintext port beside the TLS one, if there is one.
    public var plainAddress: String? {
        configuration.tls != nil && configuration.plainPort != nil ? tcp.listeners[1].address : nil
    }

    /// `HOST:PORT` of the web port (the page and `/ws`), if there is one.
    public var webAddress: String? { configuration.webPort != nil ? tcp.listeners.last?.address : nil }

    /// The bound port (the real one when 0 was asked for).
    public var port: UInt16 { tcp.boundPort }

    /// `HOST:PORT` of the metrics endpoint, if it is on.
    public var metricsAddress: String? { metricsHTTP?.localAddress }

    /// Stops accepting, lets every connection send what it owes (an EXPORT
    /// or IMPORT chunk being worked on is finished and answered first), then
    /// stops the loops and the transfer workers. Blocks; call it off the
    /// event loops.
    @discardableResult
    public func shutdown(timeout: Duration = .seconds(10)) -> TCPServer.ShutdownResult {
        metricsHTTP?.shutdown(timeout: .seconds(1))
        let result = tcp.shutdown(timeout: timeout)
        group.shutdownAndJoin()
        // After the loops: no connection is left to give a worker a job.
        transferWorkers.shutdown()
        importInflaters?.shutdown()
        return result
    }
}
