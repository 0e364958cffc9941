import ChecklistStorage
import Testing

/// `SnapshotPolicy`: a fixed number of log records for a small store, and
/// growth in proportion to the store once that is the larger.
@Suite struct SnapshotPolicyTests {
    @Test func aSmallStoreWaitsForTheRecords() {
        let policy = SnapshotPolicy(records: 1_000_000, growthPercent: 50)
        #expect(policy.recordsDue(afterSnapshotOf: 0) == 1_000_000)
        #expect(policy.recordsDue(afterSnapshotOf: 2_000_000) == 1_000_000)
    }

    @Test func aLargeStoreWaitsForItsGrowth() {
        let policy = SnapshotPolicy(records: 1_000_000, growthPercent: 50)
        #expect(policy.recordsDue(afterSnapshotOf: 2_000_002) == 1_000_001)
        #expect(policy.recordsDue(afterSnapshotOf: 10_000_000) == 5_000_000)
        #expect(SnapshotPolicy(records: 3, growthPercent: 250).recordsDue(afterSnapshotOf: 4) == 10)
    }

    @Test func noGrowthLeavesTheRecordsAlone() {
        #expect(SnapshotPolicy(records: 17, growthPercent: 0).recordsDue(afterSnapshotOf: 1 << 40) == 17)
    }

    @Test func anOverflowingProductWaitsForever() {
        #expect(SnapshotPolicy(records: 1, growthPercent: 10_000).recordsDue(afterSnapshotOf: .max / 2) == .max)
    }

    @Test func theDefaultsAreTheServersDocumentedOnes() {
        #expect(SnapshotPolicy() == SnapshotPolicy(records: 1_000_000, growthPercent: 50))
    }
}
