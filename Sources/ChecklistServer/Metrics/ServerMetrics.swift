import ChecklistStorage
import ChecklistEventLoop
import ChecklistModel
import ChecklistStore
import ChecklistWire
import Synchronization

/// Everything STATS (Protocol/SPEC.md section 6.10) and the Prometheus
/// endpoint report, gathered from where it lives: the TCP server's
/// connection and byte counters, each loop's `RequestMetrics`, the store's
/// sizes and, when registered, the durability layer's status and live
/// sync's figures.
///
/// Thread-safe: the shards and providers are behind their own locks;
/// `report()` may be called from any thread (it takes the store's lock once).
public final class ServerMetrics: Sendable {
    let shards: [RequestMetrics]
    private let store: Store
    private let startedAt: ContinuousClock.Instant
    private let providers = Mutex(Providers())
    /// The server has a TLS port: STATS reports the TLS figures (presence bit 3).
    private let hasTLSPort: Bool
    /// The server has a web port: STATS reports the WebSocket figures (presence bit 4).
    private let hasWebPort: Bool

    private struct Providers {
        var connections: (@Sendable () -> ServerStatistics)?
        var durability: (@Sendable () -> DurabilityStatus)?
        var sync: (@Sendable () -> StatsReport.SyncStatus)?
        var cache: (@Sendable () -> ListCache.Status)?
        var accessRefusals: (@Sendable () -> [(reason: String, count: UInt64)])?
    }

    init(loops: Int, store: Store, hasTLSPort: Bool = false, hasWebPort: Bool = false) {
        self.hasTLSPort = hasTLSPort
        self.hasWebPort = hasWebPort
        shards = (0..<max(1, loops)).map { _ in RequestMetrics() }
        self.store = store
        startedAt = .now
    }

    /// The shard of the loop with this index.
    func shard(forLoop index: Int) -> RequestMetrics { shards[index % shards.count] }

    /// Where the connection and byte counters come from (the TCP server,
    /// made after the handlers that need this object).
    func setConnectionStatisticsProvider(_ provider: @escaping @Sendable () -> ServerStatistics) {
        providers.withLock { $0.connections = provider }
    }

    /// Registers the durability layer's status, read at each STATS or scrape.
    /// The provider must be cheap and must not block on I/O.
    public func setDurabilityStatusProvider(_ provider: @escaping @Sendable () -> DurabilityStatus) {
        providers.withLock { $0.durability = provider }
    }

    /// Registers live sync's figures, read at each STATS or scrape.
    func setSyncStatusProvider(_ provider: @escaping @Sendable () -> StatsReport.SyncStatus) {
        providers.withLock { $0.sync = provider }
    }

    /// Registers the list cache's figures (PostgreSQL), read at each
    /// scrape. /metrics only: STATS does not carry them.
    func setCacheStatusProvider(_ provider: @escaping @Sendable () -> ListCache.Status) {
        providers.withLock { $0.cache = provider }
    }

    /// The list cache's figures, when the server has a cache.
    func cacheStatus() -> ListCache.Status? {
        providers.withLock { $0.cache }?()
    }

    /// Registers access control's refusals by reason, read at each
    /// scrape. /metrics only: STATS counts them under `NOT_AUTHENTICATED`.
    func setAccessRefusalsProvider(_ provider: @escaping @Sendable () -> [(reason: String, count: UInt64)]) {
        providers.withLock { $0.accessRefusals = provider }
    }

    /// Refused authentications by reason, when the server has access control.
    func accessRefusals() -> [(reason: String, count: UInt64)]? {
        providers.withLock { $0.accessRefusals }?()
    }

    private static func tlsStatus(_ statistics: ServerStatistics?, tlsOnPlainPort: UInt64) -> StatsReport.TLSStatus {
        func failures(_ reason: TLSConnectionFailure.Reason) -> UInt64 { statistics?.tlsFailures[reason] ?? 0 }
        var status = StatsReport.TLSStatus()
        status.handshakes = statistics?.tlsHandshakes ?? 0
        status.notTLS = failures(.notTLS)
        status.handshakeFailures = failures(.handshakeFailed)
        status.handshakesTruncated = failures(.handshakeTruncated)
        status.handshakeTimeouts = failures(.handshakeTimeout)
        status.recordErrors = failures(.recordError)
        status.tlsOnPlainPort = tlsOnPlainPort
        return status
    }

    private static func webSocketStatus(_ statistics: ServerStatistics?) -> StatsReport.WebSocketStatus {
        func count(_ event: WebSocketEvent) -> UInt64 { statistics?.webSocketEvents[event] ?? 0 }
        var status = StatsReport.WebSocketStatus()
        status.upgrades = count(.upgrade)
        status.handshakesRefused = count(.handshakeRefused)
        status.originsRefused = count(.originRefused)
        status.closedProtocolError = count(.closedProtocolError)
        status.closedUnsupportedData = count(.closedUnsupportedData)
        status.closedInvalidPayload = count(.closedInvalidPayload)
        status.closedMessageTooBig = count(.closedMessageTooBig)
        status.pingTimeouts = count(.pingTimeout)
        return status
    }

    /// Seconds since the server started.
    public var uptime: Duration { .now - startedAt }

    /// The current figures, as STATS answers them.
    public func report() -> StatsReport {
        let (connections, durability, sync) = providers.withLock { ($0.connections, $0.durability, $0.sync) }
        var figures = RequestMetrics.Figures()
        for shard in shards { figures.merge(shard.snapshot) }

        var r = StatsReport()
        r.uptimeSeconds = UInt64(max(0, uptime.components.seconds))
        if let statistics = connections?() {
            r.connectionsOpen = UInt64(max(0, statistics.connectionsOpen))
            r.connectionsTotal = statistics.connectionsTotal
            r.connectionsRejected = statistics.connectionsRejected
            r.connectionsDroppedForOutput = statistics.connectionsDroppedForOutput
            r.readPauses = statistics.readPauses
            r.bytesIn = statistics.bytesIn
            r.bytesOut = statistics.bytesOut
        }
        if hasTLSPort {
            r.tls = Self.tlsStatus(connections?(), tlsOnPlainPort: figures.tlsOnPlainPort)
        }
        if hasWebPort {
            r.webSocket = Self.webSocketStatus(connections?())
        }
        r.connectionsIdleClosed = figures.idleClosed
        r.inFlightPauses = figures.inFlightPauses
        for type in 0..<256 where figures.requests[type] > 0 || figures.requestErrors[type] > 0 {
            r.requests.append(StatsReport.TypeCount(type: MessageType(rawValue: UInt8(type)),
                                                    requests: figures.requests[type],
                                                    errors: figures.requestErrors[type]))
        }
        r.errors = figures.errorsByCode.keys.sorted().map {
            StatsReport.CodeCount(code: ChecklistError.Code(rawValue: $0), count: figures.errorsByCode[$0]!)
        }
        let latency = figures.latency
        func micros(_ nanos: UInt64) -> UInt64 { nanos / 1000 + (nanos % 1000 == 0 ? 0 : 1) }
        r.latency.count = latency.count
        r.latency.p50Micros = micros(latency.quantile(0.50))
        r.latency.p90Micros = micros(latency.quantile(0.90))
        r.latency.p99Micros = micros(latency.quantile(0.99))
        r.latency.p999Micros = micros(latency.quantile(0.999))
        r.latency.maxMicros = micros(latency.maxNanos)
        let totals = store.totals()
        r.lists = UInt64(totals.lists)
        r.items = UInt64(totals.items)
        if let status = durability?() {
            r.log = status.log
            r.snapshot = status.snapshot
        }
        r.sync = sync?()
        return r
    }
}
