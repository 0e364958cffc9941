import ChecklistModel
@testable import ChecklistServer
@testable import ChecklistStorage
import ChecklistStore
import Synchronization
import Testing

/// `ListCache.trim`: evictions bring the accounted bytes under the budget,
/// and memory is given back to the system after evictions and loads only.
@Suite(.timeLimit(.minutes(10))) struct ListCacheTrimTests {
    static let ns = Namespace.default

    /// A store with `count` lists of 200 rows each, and their revisions.
    static func store(lists count: Int) throws -> (Store, [ListID: Revision]) {
        let store = Store()
        var committed: [ListID: Revision] = [:]
        for n in 0..<count {
            let list = try store.createList(in: ns, name: "list \(n)", icon: "")
            let ops = (0..<200).map { PatchOperation.insert(tempRef: nil, position: .end, fields: ItemFields(text: "row \($0) of list \(n)")) }
            let summary = try store.patch(in: ns, list: list.id, baseRevision: nil, ops: ops).summary
            committed[summary.id] = summary.revision
        }
        return (store, committed)
    }

    @Test func evictionsBringTheAccountingUnderTheBudgetAndGiveMemoryBack() throws {
        let (store, committed) = try Self.store(lists: 4)
        let oneList = try #require(store.residentBytes(of: ListID(1)))
        let calls = Atomic<Int>(0)
        let cache = ListCache(store: store, configuration: .init(maxBytes: oneList * 2 + oneList / 2), committed: committed,
                              giveBack: { calls.add(1, ordering: .relaxed) })
        let evicted = cache.trim()
        #expect(evicted.count == 2, "4 lists, room for 2")
        #expect(cache.status.residentLists == 2)
        #expect(cache.status.residentBytes <= cache.configuration.maxBytes)
        #expect(cache.status.residentBytes == store.residentLists().reduce(0) { $0 + (store.residentBytes(of: $1.list) ?? 0) })
        for list in evicted { #expect(store.residency(of: list, in: Self.ns) == .unloaded) }
        #expect(calls.load(ordering: .relaxed) == 1, "evictions give memory back")
        #expect(cache.memoryGivenBack == 1)

        #expect(cache.trim().isEmpty)
        #expect(calls.load(ordering: .relaxed) == 1, "nothing evicted or loaded: no trim of the heap")

        // A load (here: the accounting of an installed list) gives memory back once.
        cache.loaded(store.residentLists()[0].list, nanoseconds: 1)
        #expect(cache.trim().isEmpty)
        #expect(calls.load(ordering: .relaxed) == 2)
        #expect(cache.trim().isEmpty)
        #expect(calls.load(ordering: .relaxed) == 2)
    }

    @Test func pinnedListsAreNotEvictedAndNothingIsGivenBackWithoutEvictions() throws {
        let (store, committed) = try Self.store(lists: 2)
        let calls = Atomic<Int>(0)
        let cache = ListCache(store: store, configuration: .init(maxBytes: 1024),
                              committed: committed, giveBack: { calls.add(1, ordering: .relaxed) })
        let pins = cache.pin([ListID(1), ListID(2)], in: Self.ns)
        #expect(pins.missing.isEmpty)
        #expect(cache.trim().isEmpty, "both pinned")
        #expect(calls.load(ordering: .relaxed) == 0)
        #expect(cache.status.residentLists == 2)
        cache.unpin(pins.pinned)
        #expect(cache.trim().count == 2, "over the budget, unpinned")
        #expect(cache.status.residentBytes == 0)
        #expect(calls.load(ordering: .relaxed) == 1)
    }
}
