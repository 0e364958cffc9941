@testable import ChecklistPostgres
import ChecklistModel
import Testing

@Suite(.enabled(if: TestCluster.binariesFound, TestCluster.skipReason), .timeLimit(.minutes(2)))
struct CommitTests {
    @Test func commitsAreStoredAndLoadedBack() throws {
        let (store, _) = try TestCluster.freshStore()
        try store.commit([Fixture.create(1), Fixture.rename(1, from: 1, to: "Trips"), Fixture.create(2, name: "To Do")])
        #expect(try store.list(ListID(1)) == Fixture.record(1, name: "Trips", icon: "Inbox", revision: 2))
        #expect(try store.lists(in: .default).map(\.summary.name) == ["Trips", "To Do"])
        #expect(try store.nextListID() == ListID(3))
        let sink = CollectingSink()
        var replayed: [Change] = []
        let reports = try store.loadAll(into: sink) { replayed.append($0) }
        #expect(reports.map(\.changesReplayed) == [2, 1])
        #expect(replayed.map(\.revision) == [1, 2, 1])
        #expect(replayed[1].kind == .listUpdated(name: "Trips", icon: "Inbox"))
        #expect(sink.nextListID == ListID(3))
    }

    @Test func staleRevisionIsRefusedAndNothingWritten() throws {
        let (store, _) = try TestCluster.freshStore()
        try store.commit([Fixture.create(1), Fixture.create(2)])
        try store.commit([Fixture.rename(1, from: 1, to: "First")])
        // A second writer still on revision 1, in a batch with a good commit.
        let error = #expect(throws: PostgresError.self) {
            try store.commit([Fixture.rename(2, from: 1, to: "Fine"), Fixture.rename(1, from: 1, to: "Stale")])
        }
        #expect(error?.code == .staleRevision)
        #expect(error?.lists == [ListID(1)])
        #expect(error?.message.contains("committed against revision 1, the database has revision 2") == true)
        #expect(try store.list(ListID(1))?.summary.name == "First")
        #expect(try store.list(ListID(2))?.summary.revision == 1)
        #expect(try changeCount(store) == 3)
    }

    @Test func creatingATakenIdOrDeletingAGoneListIsStale() throws {
        let (store, _) = try TestCluster.freshStore()
        try store.commit([Fixture.create(1)])
        #expect(throws: PostgresError.self) { try store.commit([Fixture.create(1)]) }
        try store.commit([Fixture.delete(1, from: 1)])
        #expect(try store.list(ListID(1)) == nil)
        let error = #expect(throws: PostgresError.self) { try store.commit([Fixture.delete(1, from: 1)]) }
        #expect(error?.code == .staleRevision)
        // The deletion is the list's only history left.
        #expect(try changeCount(store) == 1)
    }

    @Test func commitsOfOneListMustFollowEachOther() throws {
        let (store, _) = try TestCluster.freshStore()
        let error = #expect(throws: PostgresError.self) {
            try store.commit([Fixture.create(1), Fixture.rename(1, from: 5, to: "Gap")])
        }
        #expect(error?.code == .misuse)
    }

    /// The backend is killed between two statements of the batch's
    /// transaction: the batch fails and none of it is committed.
    @Test func aTransactionKilledMidBatchCommitsNone() throws {
        let (store, conninfo) = try TestCluster.freshStore()
        try store.commit([Fixture.create(1)])
        let killer = try PostgresConnection(conninfo: conninfo)
        let victim = store.connection.backendPID
        var statements = 0
        let error = #expect(throws: PostgresError.self) {
            try store.commit([Fixture.create(2), Fixture.rename(1, from: 1, to: "Lost")]) {
                statements += 1
                if statements == 1 {
                    let killed = try killer.execute("SELECT pg_terminate_backend($1)", [.int32(victim)])
                    #expect(try killed.bool(0, 0))
                }
            }
        }
        #expect(error?.code == .connectionLost)
        #expect(!store.connection.isUsable)
        let after = PostgresStore(connection: try PostgresConnection(conninfo: conninfo))
        #expect(try after.list(ListID(2)) == nil)
        #expect(try after.list(ListID(1))?.summary.revision == 1)
        #expect(try changeCount(after) == 1)
    }

    private func changeCount(_ store: PostgresStore) throws -> Int64 {
        try store.connection.execute("SELECT count(*) FROM changes").int64(0, 0)
    }
}
