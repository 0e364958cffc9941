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
/// records after loading the snapshot, and while a snapshot is being
/// written, what came meanwhile (docs/OPERATING.md, "When snapshots are
/// written").
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

/// Where the compactor stands under a `SnapshotPolicy`: the log position
/// the last snapshot (or failed attempt) covers, and how many records
/// after it the next snapshot is due.
package struct SnapshotSchedule: Sendable, Hashable {
    package let policy: SnapshotPolicy
    /// The last snapshot's start LSN (or the log's end at a failed attempt).
    package private(set) var coveredLSN: UInt64
    /// Records after `coveredLSN` before the next snapshot.
    package private(set) var due: UInt64

    /// The schedule after recovery loaded a snapshot of `items` items that
    /// covers the log up to `coveredLSN` (0 and 0 without one).
    package init(policy: SnapshotPolicy, coveredLSN: UInt64, items: UInt64) {
        self.policy = policy
        self.coveredLSN = coveredLSN
        due = policy.recordsDue(afterSnapshotOf: items)
    }

    /// Whether a log that ends at `lastLSN` wants the next snapshot.
    package func isDue(lastLSN: UInt64) -> Bool {
        lastLSN >= coveredLSN && lastLSN - coveredLSN >= due
    }

    /// Whether the next snapshot is overdue: the log has grown by twice
    /// what was due (a snapshot at the lowest priority could not keep up
    /// with a server busy on every core). Then it is written at the
    /// server's own priority (`Compactor`).
    package func isOverdue(lastLSN: UInt64) -> Bool {
        let (twice, overflow) = due.multipliedReportingOverflow(by: 2)
        return !overflow && lastLSN >= coveredLSN && lastLSN - coveredLSN >= twice
    }

    /// A snapshot of `items` items covering the log up to `startLSN` was written.
    package mutating func wrote(startLSN: UInt64, items: UInt64) {
        coveredLSN = startLSN
        due = policy.recordsDue(afterSnapshotOf: items)
    }

    /// A snapshot failed with the log at `lastLSN`: try again once as many
    /// records as were due have followed, not at every check.
    package mutating func failed(lastLSN: UInt64) {
        coveredLSN = lastLSN
    }
}
