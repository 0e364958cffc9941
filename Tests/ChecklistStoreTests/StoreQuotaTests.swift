import ChecklistModel
@testable import ChecklistStore
import Testing

/// `Store.setQuotas`: lists and items per namespace at their exact edge,
/// refused whole, deletions always allowed, other namespaces unbounded by
/// one's use.
@Suite struct StoreQuotaTests {
    let alice = Namespace("alice"), bob = Namespace("bob")

    func inserts(_ n: Int) -> [PatchOperation] {
        (0..<n).map { .insert(tempRef: nil, position: .end, fields: ItemFields(text: "item \($0)")) }
    }

    @Test func listsUpToTheQuotaThenRefused() throws {
        let store = Store()
        store.setQuotas(NamespaceQuotas(lists: 2))
        _ = try store.createList(in: alice, name: "one", icon: "")
        _ = try store.createList(in: alice, name: "two", icon: "")  // at the quota
        let error = #expect(throws: ChecklistError.self) { try store.createList(in: alice, name: "three", icon: "") }
        #expect(error?.code == .quotaExceeded && error?.field == "lists")
        #expect(store.lists(in: alice).count == 2)
        _ = try store.createList(in: bob, name: "bob's", icon: "")
        // A deletion makes room again.
        _ = try store.deleteList(in: alice, list: store.lists(in: alice)[0].id)
        _ = try store.createList(in: alice, name: "three", icon: "")
    }

    @Test func itemsOneUnderAtAndOverAcrossLists() throws {
        let store = Store()
        store.setQuotas(NamespaceQuotas(items: 10))
        let a = try store.createList(in: alice, name: "a", icon: "").id
        let b = try store.createList(in: alice, name: "b", icon: "").id
        _ = try store.patch(in: alice, list: a, baseRevision: nil, ops: inserts(6))
        _ = try store.patch(in: alice, list: b, baseRevision: nil, ops: inserts(3))  // 9: one under
        let revision = try store.summary(in: alice, list: b).revision
        let over = #expect(throws: ChecklistError.self) { try store.patch(in: alice, list: b, baseRevision: nil, ops: inserts(2)) }
        #expect(over?.code == .quotaExceeded && over?.field == "items")
        // Refused whole: nothing of it applied, the revision unchanged.
        #expect(try store.summary(in: alice, list: b).itemCount == 3 && store.summary(in: alice, list: b).revision == revision)
        _ = try store.patch(in: alice, list: b, baseRevision: nil, ops: inserts(1))  // 10: at the quota
        #expect(throws: ChecklistError.self) { try store.patch(in: alice, list: a, baseRevision: nil, ops: inserts(1)) }
        // Deleting as much as it adds passes at the quota; deletions alone always do.
        _ = try store.patch(in: alice, list: a, baseRevision: nil, ops: [.delete(.id(ItemID(1)))] + inserts(1))
        _ = try store.patch(in: alice, list: a, baseRevision: nil, ops: [.delete(.id(ItemID(2))), .delete(.id(ItemID(3)))])
        _ = try store.patch(in: alice, list: b, baseRevision: nil, ops: inserts(2))
        // Another namespace has its own count.
        let c = try store.createList(in: bob, name: "c", icon: "").id
        _ = try store.patch(in: bob, list: c, baseRevision: nil, ops: inserts(10))
    }
}
