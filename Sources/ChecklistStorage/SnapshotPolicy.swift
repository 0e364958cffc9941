/// When the compactor writes the next snapshot of a data directory.
///
/// A snapshot is the whole store, so writing one every fixed number of
/// changes costs more per change the larger the store grows: at 10M items
/// and 500k changes a second, a snapshot every 1M changes would be one
/// every two seconds, each about 3 s of CPU. So the log must also have
/// grown by `growthPercent` of the items the last snapshot held (as Redis
/// rewrites its append-only file once it has doubled): what a change costs
/// in snapshots then stays the same at any size. The price is recovery: a
/// crash replays up to `max(records, items × growthPercent / 100)` log
/// records after loading the snapshot (docs/OPERATING.md, "Durability").
public struct SnapshotPolicy: Sendable, Hashable {
    /// Log records after the last snapshot before the next one is due, at
    /// least (`--snapshot-after`).
    public var records: UInt64
    /// Percent of the last snapshot's items that the log must also have
    /// grown by (`--snapshot-growth`); 0: `records` alone decides.
    public var growthPercent: UInt64

    public init(records: UInt64 = 1_000_000, growthPercent: UInt64 = 50) {
        self.records = records
        self.growthPercent = growthPercent
    }

    /// Log records after a snapshot of `items` items before the next is due.
    public func recordsDue(afterSnapshotOf items: UInt64) -> UInt64 {
        let (scaled, overflow) = items.multipliedReportingOverflow(by: growthPercent)
        return max(records, overflow ? UInt64.max : scaled / 100)
    }
}
