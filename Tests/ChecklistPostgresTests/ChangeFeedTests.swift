import ChecklistModel
import ChecklistPostgres
import Testing

@Suite(.enabled(if: TestCluster.binariesFound, TestCluster.skipReason), .timeLimit(.minutes(2)))
struct ChangeFeedTests {
    /// List 1 at revision 10: created, then renamed 9 times.
    func tenRevisions() throws -> PostgresStore {
        let (store, _) = try TestCluster.freshStore()
        try store.commit([Fixture.create(1)] + (1..<10).map { Fixture.rename(1, from: $0, to: "v\($0 + 1)") })
        return store
    }

    func revisions(_ read: FeedRead) -> [Revision]? {
        if case .changes(let changes, _) = read { return changes.map(\.revision) }
        return nil
    }

    @Test func changesComeInRevisionOrder() throws {
        let store = try tenRevisions()
        #expect(try store.changes(in: .default, list: ListID(1), after: 0, limit: 100).completeOrNil == true)
        #expect(revisions(try store.changes(in: .default, list: ListID(1), after: 0, limit: 100)) == Array(1...10))
        #expect(try store.changes(in: .default, list: ListID(1), after: 4, limit: 3).completeOrNil == false)
        #expect(revisions(try store.changes(in: .default, list: ListID(1), after: 4, limit: 3)) == [5, 6, 7])
        #expect(try store.changes(in: .default, list: ListID(1), after: 10, limit: 3) == .changes([], complete: true))
        #expect(try store.changes(in: .default, list: ListID(1), after: 11, limit: 3) == .resyncRequired)
        #expect(try store.changes(in: Namespace("other"), list: ListID(1), after: 0, limit: 3) == .noSuchList)
    }

    /// An IMPORT over the wire is stored as one change (kind 5) after the
    /// list's history; the history answered starts over at it
    /// (Protocol/SPEC.md section 6.13), as the node's own feed does: from
    /// a revision before the import's predecessor it is RESYNC_REQUIRED,
    /// not the old history followed by the import.
    @Test func anImportStartsTheAnsweredHistoryOver() throws {
        let store = try tenRevisions()
        let imported = Change(namespace: .default, list: ListID(1), revision: 11,
                              kind: .listImported(ImportedList(name: "Imported", icon: "Inbox", nextItemID: ItemID(1),
                                                               items: ImportedItems([]))))
        try store.commit([ListCommit(namespace: .default, list: ListID(1), priorRevision: 10, changes: [imported],
                                     after: Fixture.record(1, name: "Imported", icon: "Inbox", revision: 11))])
        try store.commit([Fixture.rename(1, from: 11, to: "after")])
        #expect(try store.changes(in: .default, list: ListID(1), after: 0, limit: 100) == .resyncRequired)
        #expect(try store.changes(in: .default, list: ListID(1), after: 9, limit: 100) == .resyncRequired)
        #expect(revisions(try store.changes(in: .default, list: ListID(1), after: 10, limit: 100)) == [11, 12])
        #expect(revisions(try store.changes(in: .default, list: ListID(1), after: 11, limit: 100)) == [12])
    }

    /// The read of several lists at once (the follower's and the rebase's):
    /// each list after its own revision, in revision order, at most `limit`
    /// of each; a list with nothing after its revision is absent.
    @Test func changesOfSeveralListsEachAfterItsOwnRevision() throws {
        let store = try tenRevisions()
        try store.commit([Fixture.create(2)] + (1..<4).map { Fixture.rename(2, from: $0, to: "w\($0 + 1)") })
        let after: [ListID: Revision] = [ListID(1): 6, ListID(2): 1, ListID(3): 0]
        let all = try store.changes(after: after)
        #expect(all.mapValues { $0.map(\.revision) } == [ListID(1): [7, 8, 9, 10], ListID(2): [2, 3, 4]])
        #expect(all.values.allSatisfy { changes in changes.allSatisfy { $0.list == changes[0].list } })
        let limited = try store.changes(after: after, limit: 2)
        #expect(limited.mapValues { $0.map(\.revision) } == [ListID(1): [7, 8], ListID(2): [2, 3]])
        #expect(try store.changes(after: [ListID(1): 10, ListID(2): 4]).isEmpty)
    }

    @Test func retentionKeepsWhatALoadNeeds() throws {
        let store = try tenRevisions()
        // Without a checkpoint every change is needed to load the list.
        #expect(try store.trimChanges(retainPerList: 3) == 0)
        #expect(try store.storeCheckpoint(Fixture.checkpoint(1, revision: 8, count: 0, name: "v8")))
        #expect(try store.compactionCandidates(changes: 2, limit: 10) == [ListID(1)])
        #expect(try store.compactionCandidates(changes: 3, limit: 10) == [])
        // Changes 9 and 10 hold some bytes: a low byte bound names the list, a high one does not.
        #expect(try store.compactionCandidates(changes: 3, bytes: 1, limit: 10) == [ListID(1)])
        #expect(try store.compactionCandidates(changes: 3, bytes: 1 << 30, limit: 10) == [])
        // Keeps the last 3 and everything after the checkpoint: 8, 9, 10.
        #expect(try store.trimChanges(retainPerList: 3) == 7)
        #expect(try store.changes(in: .default, list: ListID(1), after: 6, limit: 10) == .resyncRequired)
        #expect(revisions(try store.changes(in: .default, list: ListID(1), after: 7, limit: 10)) == [8, 9, 10])
        // A load takes the checkpoint, then replays 9 and 10.
        let sink = CollectingSink()
        var replayed: [Revision] = []
        let report = try #require(try store.loadList(ListID(1), into: sink) { replayed.append($0.revision) })
        #expect(report.checkpointRevision == 8)
        #expect(sink.lists.map(\.name) == ["v8"])
        #expect(replayed == [9, 10])
        // An older checkpoint than the stored one is not taken.
        #expect(try !store.storeCheckpoint(Fixture.checkpoint(1, revision: 7, count: 0)))
    }

    /// `lists.change_bytes`, which the byte bound of `compactionCandidates`
    /// reads, is the size of the stored change bodies after the checkpoint:
    /// the commits add to it and a checkpoint takes off what it covers.
    @Test func changeBytesAreTheBodiesAfterTheCheckpoint() throws {
        let store = try tenRevisions()
        try store.commit([Fixture.create(2)])
        func counted(_ list: UInt64) throws -> Int64 {
            try store.connection.execute("SELECT change_bytes FROM lists WHERE id = $1", [.int64(Int64(list))]).int64(0, 0)
        }
        func stored(_ list: UInt64, after revision: Revision) throws -> Int64 {
            try store.connection.execute("""
                SELECT coalesce(sum(octet_length(body)), 0)::int8 FROM changes WHERE list_id = $1 AND revision > $2
                """, [.int64(Int64(list)), .int64(Int64(revision))]).int64(0, 0)
        }
        let all = try stored(1, after: 0)
        #expect(all > 0)
        #expect(try counted(1) == all)
        #expect(try counted(2) == stored(2, after: 0))
        // The bound is inclusive, and counts nothing of another list.
        #expect(try store.compactionCandidates(changes: 100, bytes: Int(all), limit: 10) == [ListID(1)])
        #expect(try store.compactionCandidates(changes: 100, bytes: Int(all) + 1, limit: 10) == [])
        #expect(try store.storeCheckpoint(Fixture.checkpoint(1, revision: 8, count: 0, name: "v8")))
        #expect(try counted(1) == stored(1, after: 8))
        #expect(try counted(1) < all)
        try store.commit([Fixture.rename(1, from: 10, to: "v11")])
        #expect(try counted(1) == stored(1, after: 8))
        #expect(try store.storeCheckpoint(Fixture.checkpoint(1, revision: 11, count: 0, name: "v11")))
        #expect(try counted(1) == 0)
        #expect(try store.compactionCandidates(changes: 100, bytes: 1, limit: 10) == [ListID(2)])
    }

    /// The upkeeps of several nodes name the same lists: one claims a
    /// list's checkpoint, the others skip it until it is let go, and once
    /// a checkpoint is stored the list is no longer due (the claim is not kept).
    @Test func oneUpkeepClaimsAListsCheckpointAtATime() throws {
        let (store, conninfo) = try TestCluster.freshStore()
        try store.commit([Fixture.create(1)] + (1..<10).map { Fixture.rename(1, from: $0, to: "v\($0 + 1)") })
        let other = try PostgresStore(conninfo: conninfo)
        func claims() throws -> Int64 {
            try store.connection.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 1667984483").int64(0, 0)
        }
        #expect(try store.claimCheckpoint(of: ListID(1), changes: 5))
        #expect(try claims() == 1)
        #expect(try !other.claimCheckpoint(of: ListID(1), changes: 5))
        try store.releaseCheckpoint(of: ListID(1))
        #expect(try other.claimCheckpoint(of: ListID(1), changes: 5))
        #expect(try other.storeCheckpoint(Fixture.checkpoint(1, revision: 10, count: 0, name: "v10")))
        try other.releaseCheckpoint(of: ListID(1))
        // Not due any more: refused, and the claim is not left held.
        #expect(try !store.claimCheckpoint(of: ListID(1), changes: 5))
        #expect(try !other.claimCheckpoint(of: ListID(1), changes: 5))
        #expect(try claims() == 0)
        // A list that is not stored is never due.
        #expect(try !store.claimCheckpoint(of: ListID(2), changes: 1))
    }

    @Test func aDeletedListKeepsOnlyItsDeletionUntilForgotten() throws {
        let store = try tenRevisions()
        try store.commit([Fixture.delete(1, from: 10)])
        #expect(try store.changes(in: .default, list: ListID(1), after: 10, limit: 10) == .noSuchList)
        #expect(try store.connection.execute("SELECT revision FROM changes").int64(0, 0) == 11)
        #expect(try store.forgetDeletions(olderThan: 3600) == 0)
        #expect(try store.forgetDeletions(olderThan: -1) == 1)
    }
}

extension FeedRead {
    var changesOrNil: [Change]? {
        if case .changes(let changes, _) = self { return changes }
        return nil
    }

    var completeOrNil: Bool? {
        if case .changes(_, let complete) = self { return complete }
        return nil
    }
}
