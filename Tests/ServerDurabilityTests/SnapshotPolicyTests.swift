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

/// `SnapshotSchedule`: the compactor's record of the last snapshot and of
/// when the next is due.
@Suite struct SnapshotScheduleTests {
    let policy = SnapshotPolicy(records: 10, growthPercent: 50)

    @Test func afterRecoveryTheLoadedSnapshotSetsTheNext() {
        let schedule = SnapshotSchedule(policy: policy, coveredLSN: 100, items: 60)
        #expect(!schedule.isDue(lastLSN: 129))
        #expect(schedule.isDue(lastLSN: 130))
        // Without a snapshot: the records alone.
        let fresh = SnapshotSchedule(policy: policy, coveredLSN: 0, items: 0)
        #expect(!fresh.isDue(lastLSN: 9) && fresh.isDue(lastLSN: 10))
    }

    @Test func aWrittenSnapshotMovesTheNextByItsItems() {
        var schedule = SnapshotSchedule(policy: policy, coveredLSN: 0, items: 0)
        schedule.wrote(startLSN: 12, items: 1_000)
        #expect(!schedule.isDue(lastLSN: 511))
        #expect(schedule.isDue(lastLSN: 512))
        schedule.wrote(startLSN: 512, items: 4)
        #expect(!schedule.isDue(lastLSN: 521) && schedule.isDue(lastLSN: 522))
    }

    @Test func aFailureWaitsForAsManyRecordsAgain() {
        var schedule = SnapshotSchedule(policy: policy, coveredLSN: 0, items: 200)
        #expect(schedule.isDue(lastLSN: 150))
        schedule.failed(lastLSN: 150)
        #expect(!schedule.isDue(lastLSN: 150) && !schedule.isDue(lastLSN: 249))
        #expect(schedule.isDue(lastLSN: 250))
    }

    @Test func aSnapshotIsOverdueAtTwiceWhatWasDue() {
        var schedule = SnapshotSchedule(policy: policy, coveredLSN: 0, items: 0)
        #expect(schedule.isDue(lastLSN: 10) && !schedule.isOverdue(lastLSN: 19))
        #expect(schedule.isOverdue(lastLSN: 20))
        schedule.wrote(startLSN: 20, items: 1_000)
        #expect(!schedule.isOverdue(lastLSN: 1_019) && schedule.isOverdue(lastLSN: 1_020))
    }

    @Test func aDueBeyondTheLogNeverOverflows() {
        let schedule = SnapshotSchedule(policy: SnapshotPolicy(records: 1, growthPercent: 10_000), coveredLSN: 5,
                                        items: .max / 2)
        #expect(schedule.due == .max)
        #expect(!schedule.isDue(lastLSN: .max) && !schedule.isOverdue(lastLSN: .max))
        // A log position below the covered one (never, but not a trap).
        #expect(!SnapshotSchedule(policy: policy, coveredLSN: 50, items: 0).isDue(lastLSN: 3))
    }
}
