import ChecklistModel
@testable import ChecklistStore
import Testing

/// A store that keeps some lists by their summary only (a PostgreSQL
/// node's cache): the residency calls move lists between the two states
/// in one step each, and a summary-only list's rows are never served.
@Suite(.timeLimit(.minutes(10))) struct StoreResidencyTests {
    static let ns = Namespace.default

    /// A store holding list 1 with `texts`, and the same list loaded into a second, private store.
    static func filled(_ texts: [String]) throws -> (Store, ListSummary) {
        let store = Store()
        let list = try store.createList(in: ns, name: "groceries", icon: "")
        let ops = texts.map { PatchOperation.insert(tempRef: nil, position: .end, fields: ItemFields(text: $0)) }
        return (store, try store.patch(in: ns, list: list.id, baseRevision: nil, ops: ops).summary)
    }

    @Test func anEvictedListKeepsItsSummaryAndRefusesItsRows() throws {
        let (store, summary) = try Self.filled(["milk", "eggs"])
        #expect(!store.evict(summary.id, ifAt: summary.revision - 1), "not at the committed revision: kept")
        #expect(store.isResident(summary.id))
        let bytes = try #require(store.residentBytes(of: summary.id))
        #expect(bytes >= ListState.bytesPerList + 2 * ListState.bytesPerRow + 7)
        #expect(store.evict(summary.id, ifAt: summary.revision))
        #expect(store.residency(of: summary.id, in: Self.ns) == .unloaded)
        #expect(store.residency(of: summary.id, in: Namespace("other")) == .absent)
        #expect(store.lists(in: Self.ns) == [summary])
        #expect(store.totals().items == 2)
        #expect(store.residentBytes(of: summary.id) == nil)
        #expect(throws: ChecklistError.self) { try store.page(in: Self.ns, list: summary.id, start: .offset(0), limit: 10, filter: .all) }
        #expect(throws: ChecklistError.self) {
            try store.patch(in: Self.ns, list: summary.id, baseRevision: nil, ops: [.delete(.id(ItemID(1)))])
        }
        // A rename needs no rows.
        let renamed = try store.updateList(in: Self.ns, list: summary.id, name: "food", icon: nil)
        #expect(renamed.itemCount == 2 && renamed.revision == summary.revision + 1)
    }

    @Test func aLoadedListReplacesTheSummaryOnlyAtTheSameRevision() throws {
        let (store, summary) = try Self.filled(["milk", "eggs"])
        #expect(store.evict(summary.id, ifAt: summary.revision))
        let (loaded, _) = try Self.filled(["milk", "eggs"])
        #expect(store.installLoaded(summary.id, from: loaded) == .installed)
        #expect(!loaded.isResident(summary.id))
        #expect(try store.page(in: Self.ns, list: summary.id, start: .offset(0), limit: 10, filter: .all).items.map(\.text) == ["milk", "eggs"])
        #expect(store.installLoaded(summary.id, from: try Self.filled(["x"]).0) == .notNeeded, "resident already")

        #expect(store.evict(summary.id, ifAt: summary.revision))
        _ = try store.updateList(in: Self.ns, list: summary.id, name: "food", icon: nil)
        #expect(store.installLoaded(summary.id, from: try Self.filled(["milk", "eggs"]).0) == .revisionMoved(current: summary.revision + 1))
        #expect(store.residency(of: summary.id, in: Self.ns) == .unloaded)
    }

    /// The keys of the patches a load replayed come with the rows: a retry
    /// sent to this node of a patch another node committed is answered, not
    /// applied again.
    @Test func aLoadedListBringsTheKeysItsLoadReplayed() throws {
        let (loaded, filled) = try Self.filled(["milk", "eggs"])
        let key = IdempotencyKey(client: 11, sequence: 3)
        let toggle: [PatchOperation] = [.toggle(.id(ItemID(1)))]
        let committed = try loaded.patch(in: Self.ns, list: filled.id, baseRevision: nil, ops: toggle, idempotencyKey: key)
        let store = Store()
        #expect(store.installUnloaded(ExportedList(namespace: Self.ns, summary: committed.summary, nextItemID: ItemID(3))))
        #expect(store.installLoaded(filled.id, from: loaded) == .installed)
        let retry = try store.patch(in: Self.ns, list: filled.id, baseRevision: nil, ops: toggle, idempotencyKey: key)
        #expect(retry.isRepeat && retry.revision == committed.revision)
        #expect(store.lists(in: Self.ns).map(\.revision) == [committed.revision])
    }

    @Test func installUnloadedAddsAndUpdatesSummariesButNeverDropsRows() throws {
        let store = Store()
        let exported = ExportedList(namespace: Self.ns, summary: ListSummary(id: ListID(7), name: "far", icon: "", itemCount: 3,
                                                                             uncheckedCount: 1, revision: 9), nextItemID: ItemID(4))
        #expect(store.installUnloaded(exported))
        #expect(store.lists(in: Self.ns).map(\.revision) == [9])
        #expect(store.nextListID == ListID(8))
        var moved = exported
        moved.summary.revision = 10
        moved.summary.itemCount = 4
        #expect(store.installUnloaded(moved))
        #expect(store.lists(in: Self.ns).map(\.itemCount) == [4])
        let (resident, summary) = try Self.filled(["milk"])
        #expect(!resident.installUnloaded(ExportedList(namespace: Self.ns, summary: summary, nextItemID: ItemID(2))))
        #expect(resident.isResident(summary.id))
    }
}
