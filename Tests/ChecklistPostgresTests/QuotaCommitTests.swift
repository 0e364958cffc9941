@testable import ChecklistPostgres
import ChecklistModel
import ChecklistStore
import Testing

/// The quota check of a commit (schema version 3, `Statements.checkQuotas`):
/// two connections stand for two nodes writing one namespace; each commit
/// is checked against what the database holds, one under and at the quota
/// pass, over is refused with nothing written, and a change that adds
/// nothing always passes.
@Suite(.enabled(if: TestCluster.binariesFound, TestCluster.skipReason), .timeLimit(.minutes(2)))
struct QuotaCommitTests {
    /// List `id` renamed from `base`, left with `items` items and `rowBytes` bytes of texts.
    static func fill(_ id: UInt64, from base: Revision, items: UInt64, rowBytes: Int? = nil) -> ListCommit {
        var commit = Fixture.rename(id, from: base, to: "L\(id)")
        commit.after?.summary.itemCount = items
        commit.rowBytes = rowBytes
        return commit
    }

    func refusal(_ body: () throws -> Void) -> (Namespace?, String?) {
        do {
            try body()
            return (nil, nil)
        } catch let error as PostgresError {
            return (error.quota?.namespace, error.quota?.refusal.field ?? "\(error)")
        } catch {
            return (nil, "\(error)")
        }
    }

    @Test func listsAndItemsAtTheEdgeAcrossTwoConnections() throws {
        let (a, conninfo) = try TestCluster.freshStore()
        let b = try PostgresStore(conninfo: conninfo)
        let quotas = NamespaceQuotas(lists: 2, items: 5)
        try a.commit([Fixture.create(1)], quotas: quotas)  // one under
        try b.commit([Fixture.create(2)], quotas: quotas)  // at
        #expect(refusal { try a.commit([Fixture.create(3)], quotas: quotas) } == (.default, "lists"))
        #expect(try a.list(ListID(3)) == nil)
        // Another namespace has quotas of its own.
        try a.commit([Fixture.create(4, namespace: Namespace("other"))], quotas: quotas)

        try a.commit([Self.fill(1, from: 1, items: 3)], quotas: quotas)
        try b.commit([Self.fill(2, from: 1, items: 2)], quotas: quotas)  // 5: at
        #expect(refusal { try a.commit([Self.fill(1, from: 2, items: 4)], quotas: quotas) } == (.default, "items"))
        #expect(try a.list(ListID(1))?.summary.itemCount == 3)
        // A batch that shrinks one list and grows another no more passes.
        try a.commit([Self.fill(1, from: 2, items: 2), Self.fill(2, from: 2, items: 3)], quotas: quotas)
        // Deleting always passes, and makes room.
        try b.commit([Fixture.delete(2, from: 3)], quotas: quotas)
        try a.commit([Self.fill(1, from: 3, items: 5)], quotas: quotas)
        #expect(try a.list(ListID(1))?.summary.itemCount == 5)
    }

    @Test func bytesCountNamesIconsAndRows() throws {
        let (a, conninfo) = try TestCluster.freshStore()
        let b = try PostgresStore(conninfo: conninfo)
        let quotas = NamespaceQuotas(bytes: 40)
        try a.commit([Fixture.create(1)], quotas: quotas)  // "Groceries" + "Groceries": 18
        try b.commit([Self.fill(1, from: 1, items: 2, rowBytes: 15)], quotas: quotas)  // "L1" + "Inbox" + 15: 22
        try a.commit([Fixture.create(2, name: "Ab", icon: "Cd")], quotas: quotas)  // 26
        try b.commit([Self.fill(2, from: 1, items: 1, rowBytes: 7)], quotas: quotas)  // 22 + 7 + 7 = 36
        #expect(refusal { try a.commit([Self.fill(2, from: 2, items: 1, rowBytes: 12)], quotas: quotas) } == (.default, "bytes"))
        // Unknown row bytes keep the stored ones: a rename of the same length passes.
        try a.commit([Self.fill(2, from: 2, items: 1, rowBytes: nil)], quotas: quotas)
        try b.commit([Self.fill(2, from: 3, items: 1, rowBytes: 11)], quotas: quotas)  // 40: at
    }
}
