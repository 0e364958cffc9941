import ChecklistModel

/// STATS_REPORT (0xD0): the server's operational figures since it started
/// (Protocol/SPEC.md section 6.10). Counters only grow; `connectionsOpen`,
/// `lists` and `items` are gauges.
public struct StatsReport: WireMessage {
    public static let messageType = MessageType.statsReport
    static let hasLog: UInt8 = 1 << 0
    static let hasSnapshot: UInt8 = 1 << 1
    static let hasSync: UInt8 = 1 << 2
    static let hasTLS: UInt8 = 1 << 3
    static let hasWebSocket: UInt8 = 1 << 4
    static let hasUsage: UInt8 = 1 << 5

    /// Requests of one message type, and how many of them were answered with ERROR.
    public struct TypeCount: Hashable, Sendable {
        public var type: MessageType
        public var requests: UInt64
        public var errors: UInt64
        public init(type: MessageType, requests: UInt64, errors: UInt64) {
            self.type = type
            self.requests = requests
            self.errors = errors
        }
    }

    /// ERROR answers with one code.
    public struct CodeCount: Hashable, Sendable {
        public var code: ChecklistError.Code
        public var count: UInt64
        public init(code: ChecklistError.Code, count: UInt64) {
            self.code = code
            self.count = count
        }
    }

    /// Server-side request latency, in microseconds.
    public struct Latency: Hashable, Sendable {
        /// Requests timed.
        public var count: UInt64 = 0
        public var p50Micros: UInt64 = 0
        public var p90Micros: UInt64 = 0
        public var p99Micros: UInt64 = 0
        public var p999Micros: UInt64 = 0
        public var maxMicros: UInt64 = 0
        public init() {}
    }

    /// The write-ahead log (absent when the server keeps no log).
    public struct LogStatus: Hashable, Sendable {
        /// The last log sequence number appended.
        public var lastLSN: UInt64
        /// Records up to this LSN are on disk (fsynced).
        public var durableLSN: UInt64
        /// Segment files the log has now.
        public var segments: UInt64
        /// A write or fsync failed: the log takes no more records.
        public var failed: Bool
        public init(lastLSN: UInt64, durableLSN: UInt64, segments: UInt64, failed: Bool) {
            self.lastLSN = lastLSN
            self.durableLSN = durableLSN
            self.segments = segments
            self.failed = failed
        }
    }

    /// The last snapshot written (absent when there is none).
    public struct SnapshotStatus: Hashable, Sendable {
        /// The snapshot holds every change up to this LSN.
        public var lsn: UInt64
        /// When it was finished, seconds since 1970-01-01T00:00:00Z.
        public var time: Int64
        /// Its size on disk.
        public var bytes: UInt64
        public init(lsn: UInt64, time: Int64, bytes: UInt64) {
            self.lsn = lsn
            self.time = time
            self.bytes = bytes
        }
    }

    /// Live sync (absent when the server does not offer SUBSCRIBE).
    public struct SyncStatus: Hashable, Sendable {
        /// Connections with at least one subscription now.
        public var subscribers: UInt64
        /// Changes committed and offered to subscribers since start.
        public var changesPublished: UInt64
        /// CHANGE pushes written to subscribers' connections since start.
        public var pushesDelivered: UInt64
        /// Subscribers cut at their push buffer (SUBSCRIPTION_DROPPED) since start.
        public var subscribersDropped: UInt64
        /// Changes retained for CHANGES_SINCE and catch-up now.
        public var retainedChanges: UInt64
        /// Their encoded size.
        public var retainedBytes: UInt64
        public init(subscribers: UInt64, changesPublished: UInt64, pushesDelivered: UInt64, subscribersDropped: UInt64,
                    retainedChanges: UInt64, retainedBytes: UInt64) {
            self.subscribers = subscribers
            self.changesPublished = changesPublished
            self.pushesDelivered = pushesDelivered
            self.subscribersDropped = subscribersDropped
            self.retainedChanges = retainedChanges
            self.retainedBytes = retainedBytes
        }
    }

    public var uptimeSeconds: UInt64 = 0
    public var connectionsOpen: UInt64 = 0
    public var connectionsTotal: UInt64 = 0
    public var connectionsRejected: UInt64 = 0
    public var connectionsIdleClosed: UInt64 = 0
    public var connectionsDroppedForOutput: UInt64 = 0
    public var readPauses: UInt64 = 0
    public var inFlightPauses: UInt64 = 0
    public var bytesIn: UInt64 = 0
    public var bytesOut: UInt64 = 0
    /// By ascending type; types never requested are left out.
    public var requests: [TypeCount] = []
    /// By ascending code; codes never answered are left out.
    public var errors: [CodeCount] = []
    public var latency = Latency()
    public var lists: UInt64 = 0
    public var items: UInt64 = 0
    public var log: LogStatus?
    public var snapshot: SnapshotStatus?
    public var sync: SyncStatus?
    /// TLS (absent when the server has no TLS port).
    public var tls: TLSStatus?
    /// The web port (absent when the server has none).
    public var webSocket: WebSocketStatus?
    /// The asking connection's namespace usage (only in answer to
    /// `Stats.Options.usage`).
    public var usage: UsageStatus?

    public init() {}

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> StatsReport {
        var s = StatsReport()
        s.uptimeSeconds = try r.readVarint("uptimeSeconds")
        s.connectionsOpen = try r.readVarint("connectionsOpen")
        s.connectionsTotal = try r.readVarint("connectionsTotal")
        s.connectionsRejected = try r.readVarint("connectionsRejected")
        s.connectionsIdleClosed = try r.readVarint("connectionsIdleClosed")
        s.connectionsDroppedForOutput = try r.readVarint("connectionsDroppedForOutput")
        s.readPauses = try r.readVarint("readPauses")
        s.inFlightPauses = try r.readVarint("inFlightPauses")
        s.bytesIn = try r.readVarint("bytesIn")
        s.bytesOut = try r.readVarint("bytesOut")
        // A TypeCount takes at least 3 bytes, a CodeCount 2: bounds hostile counts.
        let typeCount = try r.readCount("typeCount", max: r.remaining / 3)
        s.requests.reserveCapacity(typeCount)
        for _ in 0..<typeCount {
            s.requests.append(TypeCount(type: MessageType(rawValue: try r.readU8("type")),
                                        requests: try r.readVarint("requests"), errors: try r.readVarint("errors")))
        }
        let codeCount = try r.readCount("codeCount", max: r.remaining / 2)
        s.errors.reserveCapacity(codeCount)
        for _ in 0..<codeCount {
            let code = ChecklistError.Code(rawValue: UInt16(try r.readCount("code", max: Int(UInt16.max))))
            s.errors.append(CodeCount(code: code, count: try r.readVarint("count")))
        }
        s.latency.count = try r.readVarint("latencyCount")
        s.latency.p50Micros = try r.readVarint("latencyP50Micros")
        s.latency.p90Micros = try r.readVarint("latencyP90Micros")
        s.latency.p99Micros = try r.readVarint("latencyP99Micros")
        s.latency.p999Micros = try r.readVarint("latencyP999Micros")
        s.latency.maxMicros = try r.readVarint("latencyMaxMicros")
        s.lists = try r.readVarint("lists")
        s.items = try r.readVarint("items")
        let presence = try r.readPresence(known: hasLog | hasSnapshot | hasSync | hasTLS | hasWebSocket | hasUsage)
        if presence & hasLog != 0 {
            s.log = LogStatus(lastLSN: try r.readVarint("logLastLSN"), durableLSN: try r.readVarint("logDurableLSN"),
                              segments: try r.readVarint("logSegments"), failed: try r.readBool("logFailed"))
        }
        if presence & hasSnapshot != 0 {
            s.snapshot = SnapshotStatus(lsn: try r.readVarint("snapshotLSN"), time: try r.readZigZag("snapshotTime"),
                                        bytes: try r.readVarint("snapshotBytes"))
        }
        if presence & hasSync != 0 {
            s.sync = SyncStatus(subscribers: try r.readVarint("syncSubscribers"),
                                changesPublished: try r.readVarint("syncChangesPublished"),
                                pushesDelivered: try r.readVarint("syncPushesDelivered"),
                                subscribersDropped: try r.readVarint("syncSubscribersDropped"),
                                retainedChanges: try r.readVarint("syncRetainedChanges"),
                                retainedBytes: try r.readVarint("syncRetainedBytes"))
        }
        if presence & hasTLS != 0 { s.tls = try TLSStatus.decode(from: &r) }
        if presence & hasWebSocket != 0 { s.webSocket = try WebSocketStatus.decode(from: &r) }
        if presence & hasUsage != 0 { s.usage = try UsageStatus.decode(from: &r) }
        return s
    }

    public func encode(into w: inout WireWriter) {
        for v in [uptimeSeconds, connectionsOpen, connectionsTotal, connectionsRejected, connectionsIdleClosed,
                  connectionsDroppedForOutput, readPauses, inFlightPauses, bytesIn, bytesOut] {
            w.writeVarint(v)
        }
        w.writeVarint(requests.count)
        for t in requests {
            w.writeU8(t.type.rawValue)
            w.writeVarint(t.requests)
            w.writeVarint(t.errors)
        }
        w.writeVarint(errors.count)
        for e in errors {
            w.writeVarint(UInt64(e.code.rawValue))
            w.writeVarint(e.count)
        }
        for v in [latency.count, latency.p50Micros, latency.p90Micros, latency.p99Micros, latency.p999Micros,
                  latency.maxMicros, lists, items] {
            w.writeVarint(v)
        }
        w.writeU8((log != nil ? Self.hasLog : 0) | (snapshot != nil ? Self.hasSnapshot : 0) | (sync != nil ? Self.hasSync : 0)
                  | (tls != nil ? Self.hasTLS : 0) | (webSocket != nil ? Self.hasWebSocket : 0)
                  | (usage != nil ? Self.hasUsage : 0))
        if let log {
            w.writeVarint(log.lastLSN)
            w.writeVarint(log.durableLSN)
            w.writeVarint(log.segments)
            w.writeBool(log.failed)
        }
        if let snapshot {
            w.writeVarint(snapshot.lsn)
            w.writeZigZag(snapshot.time)
            w.writeVarint(snapshot.bytes)
        }
        if let sync {
            for v in [sync.subscribers, sync.changesPublished, sync.pushesDelivered, sync.subscribersDropped,
                      sync.retainedChanges, sync.retainedBytes] {
                w.writeVarint(v)
            }
        }
        for v in tls?.fields ?? [] { w.writeVarint(v) }
        for v in webSocket?.fields ?? [] { w.writeVarint(v) }
        usage?.encode(into: &w)
    }
}
