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

/// `--quota-bytes` (names, icons, texts and client keys, UTF-8) and imports
/// under every quota.
@Suite struct StoreByteQuotaTests {
    let alice = Namespace("alice"), bob = Namespace("bob")

    func insert(_ text: String, key: String? = nil) -> PatchOperation {
        .insert(tempRef: nil, position: .end, fields: ItemFields(text: text, clientKey: key))
    }

    func refusal(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as ChecklistError {
            return error.code == .quotaExceeded ? error.field : "\(error)"
        } catch {
            return "\(error)"
        }
    }

    @Test func bytesOneUnderAtAndOverRefusedWhole() throws {
        let store = Store()
        store.setQuotas(NamespaceQuotas(bytes: 20))
        let list = try store.createList(in: alice, name: "Trip", icon: "").id  // 4
        _ = try store.patch(in: alice, list: list, baseRevision: nil, ops: [insert("Tent"), insert("Stov", key: "k1")])  // 14
        #expect(store.usage(of: alice) == NamespaceUsage(lists: 1, items: 2, bytes: 14))
        _ = try store.patch(in: alice, list: list, baseRevision: nil, ops: [insert("é€")])  // 2 + 3 bytes: 19, one under
        let revision = try store.summary(in: alice, list: list).revision
        #expect(refusal { _ = try store.patch(in: alice, list: list, baseRevision: nil, ops: [insert("a"), insert("b")]) } == "bytes")
        #expect(try store.summary(in: alice, list: list).itemCount == 3 && store.summary(in: alice, list: list).revision == revision)
        _ = try store.patch(in: alice, list: list, baseRevision: nil, ops: [insert("a")])  // 20: at the quota
        #expect(store.usage(of: alice).bytes == 20)
        // Growing a text, a key, a name or an icon at the quota is refused; a new list too.
        #expect(refusal { _ = try store.patch(in: alice, list: list, baseRevision: nil, ops: [.setText(.id(ItemID(1)), "Tents")]) } == "bytes")
        #expect(refusal { _ = try store.patch(in: alice, list: list, baseRevision: nil, ops: [.setKey(.id(ItemID(1)), "k")]) } == "bytes")
        #expect(refusal { _ = try store.updateList(in: alice, list: list, name: "Trips", icon: nil) } == "bytes")
        #expect(refusal { _ = try store.createList(in: alice, name: "X", icon: "") } == "bytes")
        #expect(store.usage(of: alice).bytes == 20)
        // Shrinking and deleting always work, and make room; other namespaces are not bounded by alice's use.
        _ = try store.patch(in: alice, list: list, baseRevision: nil, ops: [.setText(.id(ItemID(1)), "T")])  // 17
        _ = try store.patch(in: alice, list: list, baseRevision: nil, ops: [.setKey(.id(ItemID(2)), "k1234")])  // 20
        _ = try store.patch(in: alice, list: list, baseRevision: nil, ops: [.delete(.id(ItemID(2)))])  // 11
        _ = try store.updateList(in: alice, list: list, name: "Trip 2026", icon: nil)  // 16
        #expect(store.usage(of: alice) == NamespaceUsage(lists: 1, items: 3, bytes: 16))
        _ = try store.createList(in: bob, name: String(repeating: "b", count: 20), icon: "")
    }

    func staging(_ store: Store, _ lists: [(id: UInt64, texts: [String])]) throws -> ImportStaging {
        var staging = store.makeImportStaging()
        for list in lists {
            try staging.beginList(ImportStaging.ListHeader(namespace: alice, sourceID: ListID(list.id), name: "L", icon: "",
                                                           revision: 1, nextItemID: ItemID(100)))
            for (i, text) in list.texts.enumerated() { try staging.append(Item(id: ItemID(UInt64(i + 1)), fields: ItemFields(text: text))) }
        }
        return staging
    }

    @Test(arguments: [(NamespaceQuotas(lists: 3), "lists"), (NamespaceQuotas(items: 5), "items"), (NamespaceQuotas(bytes: 12), "bytes")])
    func importsAtTheEdgePassAndOverAreRefusedWhole(quotas: NamespaceQuotas, field: String) throws {
        let store = Store()
        store.setQuotas(quotas)
        let list = try store.createList(in: alice, name: "A", icon: "").id
        _ = try store.patch(in: alice, list: list, baseRevision: nil, ops: [insert("ab"), insert("cd")])  // 1 list, 2 items, 5 bytes
        let before = store.usage(of: alice)
        // Over each quota by one: 4 lists, 6 items, 13 bytes.
        let over = try staging(store, [(50, ["x", "y"]), (51, ["z"]), (52, ["ww"])])
        #expect(refusal { _ = try store.importLists(over, mode: .merge, namespace: alice) } == field)
        #expect(store.usage(of: alice) == before && store.lists(in: alice).map(\.id) == [list])
        // At each quota exactly: a merge that replaces list 1 and adds two lists (3 lists, 5 items, 12 bytes).
        let at = try staging(store, [(list.rawValue, ["ab", "cd"]), (60, ["ef", "gh"]), (61, ["i"])])
        _ = try store.importLists(at, mode: .merge, namespace: alice)
        #expect(store.usage(of: alice) == NamespaceUsage(lists: 3, items: 5, bytes: 12))
        // A replace that shrinks the namespace always passes, even under a lowered quota.
        store.setQuotas(NamespaceQuotas(lists: 0, items: 0, bytes: 0))
        _ = try store.importLists(try staging(store, [(70, ["q"])]), mode: .replace, namespace: alice)
        #expect(store.usage(of: alice) == NamespaceUsage(lists: 1, items: 1, bytes: 2))
    }
}
