import ChecklistWire

/// What STATS and /metrics report about durability: the write-ahead log
/// and the last snapshot. Either is nil when the server has none. The
/// durability layer registers a provider with
/// `ServerMetrics.setDurabilityStatusProvider`; without one both are absent.
public struct DurabilityStatus: Sendable, Hashable {
    public var log: StatsReport.LogStatus?
    public var snapshot: StatsReport.SnapshotStatus?

    public init(log: StatsReport.LogStatus? = nil, snapshot: StatsReport.SnapshotStatus? = nil) {
        self.log = log
        self.snapshot = snapshot
    }
}
