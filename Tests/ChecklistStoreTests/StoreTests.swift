import ChecklistModel
import Testing
@testable import ChecklistStore

/// The store's rules one by one: ids, revisions, the committed changes,
/// validation errors (codes and fields that cross the wire), temp refs.
@Suite(.timeLimit(.minutes(10))) struct StoreTests {
    static let limits = Limits(maxFrameBytes: 1 << 20, maxPageRows: 50, maxTextBytes: 16, maxBatchOps: 5)

    static func makeStore() -> (Store, ChangeRecorder) {
        let recorder = ChangeRecorder()
        return (Store(limits: limits, onCommit: recorder.record), recorder)
    }

    static func items(_ store: Store, _ ns: Namespace = .default, _ list: ListID) throws -> [Item] {
        try store.page(in: ns, list: list, start: .offset(0), limit: 50, filter: .all).items
    }

    static func expectError(_ code: ChecklistError.Code, field: String? = nil, message: String? = nil,
                            sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("expected \(code.name)", sourceLocation: sourceLocation)
        } catch let error as ChecklistError {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
            #expect(error.field == field, "\(error)", sourceLocation: sourceLocation)
            if let message { #expect(error.message == message, sourceLocation: sourceLocation) }
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("list ids are store-wide, start at 1 and are never reused")
    func listIDs() throws {
        let (store, _) = Self.makeStore()
        let a = try store.createList(in: Namespace("a"), name: "Birthdays", icon: "Birthdays")
        let b = try store.createList(in: Namespace("b"), name: "Groceries", icon: "Groceries")
        #expect(a.id == ListID(1) && b.id == ListID(2))
        #expect(a == ListSummary(id: ListID(1), name: "Birthdays", icon: "Birthdays", itemCount: 0, uncheckedCount: 0, revision: 1))
        _ = try store.deleteList(in: Namespace("b"), list: b.id)
        let c = try store.createList(in: Namespace("b"), name: "To Do", icon: "No Icon")
        #expect(c.id == ListID(3))
        let d = try store.createList(in: Namespace("a"), name: "Cool Apps", icon: "Folder")
        #expect(store.lists(in: Namespace("a")).map(\.id) == [ListID(1), ListID(4)])
        #expect(store.lists(in: Namespace("b")).map(\.id) == [ListID(3)])
        #expect(store.lists(in: Namespace("nobody")).isEmpty)
        #expect(try store.summary(in: Namespace("a"), list: d.id) == d)
        #expect(store.nextListID == ListID(5))
    }

    @Test("item ids count per list from 1 and are never reused")
    func itemIDs() throws {
        let (store, _) = Self.makeStore()
        let list = try store.createList(in: .default, name: "L", icon: "")
        let other = try store.createList(in: .default, name: "M", icon: "")
        let first = try store.patch(in: .default, list: list.id, baseRevision: nil, ops: [
            .insert(tempRef: 1, position: .end, fields: ItemFields(text: "a")),
            .insert(tempRef: 2, position: .end, fields: ItemFields(text: "b")),
        ])
        #expect(first.ids == [.init(tempRef: 1, id: ItemID(1)), .init(tempRef: 2, id: ItemID(2))])
        _ = try store.patch(in: .default, list: list.id, baseRevision: nil, ops: [.delete(.id(ItemID(2)))])
        let again = try store.patch(in: .default, list: list.id, baseRevision: nil, ops: [
            .insert(tempRef: 5, position: .end, fields: ItemFields(text: "c")),
        ])
        #expect(again.ids == [.init(tempRef: 5, id: ItemID(3))])
        let elsewhere = try store.patch(in: .default, list: other.id, baseRevision: nil, ops: [
            .insert(tempRef: 1, position: .end, fields: ItemFields(text: "x")),
        ])
        #expect(elsewhere.ids == [.init(tempRef: 1, id: ItemID(1))])
    }

    @Test("every accepted request commits one change, in revision order")
    func committedChanges() throws {
        let (store, recorder) = Self.makeStore()
        let ns = Namespace("n")
        let list = try store.createList(in: ns, name: "Groceries", icon: "Groceries")
        let updated = try store.updateList(in: ns, list: list.id, name: nil, icon: "Inbox")
        #expect(updated.revision == 2 && updated.name == "Groceries" && updated.icon == "Inbox")
        let patched = try store.patch(in: ns, list: list.id, baseRevision: 2, ops: [
            .insert(tempRef: nil, position: .end, fields: ItemFields(text: "milk")),
            .insert(tempRef: 9, position: .index(0), fields: ItemFields(text: "eggs", price: 299)),
            .insert(tempRef: nil, position: .after(.temp(9)), fields: ItemFields(text: "bread", checked: true)),
            .toggle(.id(ItemID(1))),
            .toggle(.temp(9)),
        ])
        #expect(patched.revision == 3)
        #expect(patched.applied == [
            .insert(id: ItemID(1), index: 0, fields: ItemFields(text: "milk")),
            .insert(id: ItemID(2), index: 0, fields: ItemFields(text: "eggs", price: 299)),
            .insert(id: ItemID(3), index: 1, fields: ItemFields(text: "bread", checked: true)),
            .setChecked(ItemID(1), true),
            .setChecked(ItemID(2), true),
        ])
        let more = try store.patch(in: ns, list: list.id, baseRevision: 3, ops: [
            .setText(.id(ItemID(2)), "free-range eggs"),
            .move(.id(ItemID(1)), toIndex: 0),
            .setDue(.id(ItemID(3)), 1_700_000_000),
            .setRemind(.id(ItemID(3)), true),
            .setPrice(.id(ItemID(2)), nil),
        ])
        #expect(more.revision == 4)
        #expect(more.summary == ListSummary(id: list.id, name: "Groceries", icon: "Inbox", itemCount: 3, uncheckedCount: 0, revision: 4))
        #expect(try Self.items(store, ns, list.id) == [
            Item(id: ItemID(1), fields: ItemFields(text: "milk", checked: true)),
            Item(id: ItemID(2), fields: ItemFields(text: "free-range eggs", checked: true)),
            Item(id: ItemID(3), fields: ItemFields(text: "bread", checked: true, due: 1_700_000_000, remind: true)),
        ])
        let deleted = try store.deleteList(in: ns, list: list.id)
        #expect(deleted == 5)
        #expect(recorder.changes == [
            Change(namespace: ns, list: list.id, revision: 1, kind: .listCreated(name: "Groceries", icon: "Groceries")),
            Change(namespace: ns, list: list.id, revision: 2, kind: .listUpdated(name: "Groceries", icon: "Inbox")),
            Change(namespace: ns, list: list.id, revision: 3, kind: .patched(patched.applied)),
            Change(namespace: ns, list: list.id, revision: 4, kind: .patched(more.applied)),
            Change(namespace: ns, list: list.id, revision: 5, kind: .listDeleted),
        ])
    }

    @Test("another namespace's list looks exactly like a missing one")
    func namespaceIsolation() throws {
        let (store, recorder) = Self.makeStore()
        let alice = Namespace("alice")
        let bob = Namespace("bob")
        let list = try store.createList(in: alice, name: "Private", icon: "")
        _ = try store.patch(in: alice, list: list.id, baseRevision: nil,
                            ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "secret"))])
        let committed = recorder.changes.count
        let missing = ListID(99)

        for id in [list.id, missing] {
            let message = "list \(id) not found"
            Self.expectError(.notFound, message: message) { _ = try store.summary(in: bob, list: id) }
            Self.expectError(.notFound, message: message) { _ = try store.updateList(in: bob, list: id, name: "Mine", icon: nil) }
            Self.expectError(.notFound, message: message) { _ = try store.deleteList(in: bob, list: id) }
            Self.expectError(.notFound, message: message) {
                _ = try store.patch(in: bob, list: id, baseRevision: nil, ops: [.delete(.id(ItemID(1)))])
            }
            Self.expectError(.notFound, message: message) {
                _ = try store.page(in: bob, list: id, start: .offset(0), limit: 10, filter: .all)
            }
        }
        #expect(store.lists(in: bob).isEmpty)
        #expect(store.lists(in: alice).count == 1)
        #expect(try Self.items(store, alice, list.id).map(\.text) == ["secret"])
        #expect(recorder.changes.count == committed)
    }

    /// One invalid request per case: (what, code, field).
    static let invalidPatches: [(String, [PatchOperation], ChecklistError.Code, String?)] = [
        ("no operations", [], .badField, "ops"),
        ("too many operations", Array(repeating: .setChecked(.id(ItemID(1)), true), count: 6), .limitExceeded, "ops"),
        ("unknown item", [.setChecked(.id(ItemID(42)), true)], .notFound, nil),
        ("temp ref before its insert", [.setText(.temp(3), "x"), .insert(tempRef: 3, position: .end, fields: ItemFields(text: "y"))], .badField, "ref"),
        ("insert after itself", [.insert(tempRef: 3, position: .after(.temp(3)), fields: ItemFields(text: "y"))], .badField, "ref"),
        ("duplicate temp ref", [.insert(tempRef: 3, position: .end, fields: ItemFields(text: "a")),
                                .insert(tempRef: 3, position: .end, fields: ItemFields(text: "b"))], .badField, "tempRef"),
        ("zero temp ref", [.insert(tempRef: 0, position: .end, fields: ItemFields(text: "a"))], .badField, "tempRef"),
        ("insert past the end", [.insert(tempRef: nil, position: .index(3), fields: ItemFields(text: "a"))], .badField, "index"),
        ("move past the end", [.move(.id(ItemID(1)), toIndex: 2)], .badField, "toIndex"),
        ("text too long", [.setText(.id(ItemID(1)), String(repeating: "é", count: 9))], .limitExceeded, "text"),
        ("inserted text too long", [.insert(tempRef: nil, position: .end, fields: ItemFields(text: String(repeating: "x", count: 17)))], .limitExceeded, "text"),
        ("deleted item", [.delete(.id(ItemID(1))), .toggle(.id(ItemID(1)))], .notFound, nil),
        ("deleted temp item", [.insert(tempRef: 8, position: .end, fields: ItemFields(text: "a")), .delete(.temp(8)), .delete(.temp(8))], .notFound, nil),
    ]

    @Test("invalid patches are refused whole, with the right code and field", arguments: invalidPatches)
    func invalidPatch(_ what: String, _ ops: [PatchOperation], _ code: ChecklistError.Code, _ field: String?) throws {
        let (store, recorder) = Self.makeStore()
        let list = try store.createList(in: .default, name: "L", icon: "")
        _ = try store.patch(in: .default, list: list.id, baseRevision: nil, ops: [
            .insert(tempRef: nil, position: .end, fields: ItemFields(text: "one")),
            .insert(tempRef: nil, position: .end, fields: ItemFields(text: "two")),
        ])
        let before = StoreContents(store)
        let committed = recorder.changes.count
        Self.expectError(code, field: field) { _ = try store.patch(in: .default, list: list.id, baseRevision: nil, ops: ops) }
        #expect(StoreContents(store) == before, "\(what)")
        #expect(recorder.changes.count == committed)
    }

    @Test("messages name the missing item")
    func notFoundMessages() throws {
        let (store, _) = Self.makeStore()
        let list = try store.createList(in: .default, name: "L", icon: "")
        Self.expectError(.notFound, message: "item 7 not found") {
            _ = try store.patch(in: .default, list: list.id, baseRevision: nil, ops: [.delete(.id(ItemID(7)))])
        }
        Self.expectError(.notFound, message: "item 7 not found") {
            _ = try store.page(in: .default, list: list.id, start: .anchor(ItemID(7)), limit: 1, filter: .all)
        }
    }

    @Test("a stale base revision is a conflict that reports the current revision")
    func conflict() throws {
        let (store, _) = Self.makeStore()
        let list = try store.createList(in: .default, name: "L", icon: "")
        _ = try store.updateList(in: .default, list: list.id, name: "M", icon: nil)
        do {
            _ = try store.patch(in: .default, list: list.id, baseRevision: 1,
                                ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "a"))])
            Issue.record("expected a conflict")
        } catch {
            #expect(error.code == .conflict && error.revision == 2)
        }
        #expect(try store.summary(in: .default, list: list.id).revision == 2)
        #expect(try store.patch(in: .default, list: list.id, baseRevision: 2,
                                ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "a"))]).revision == 3)
    }

    @Test("list names and icons are checked")
    func listValidation() throws {
        let (store, recorder) = Self.makeStore()
        Self.expectError(.badField, field: "name") { _ = try store.createList(in: .default, name: "", icon: "") }
        Self.expectError(.limitExceeded, field: "name") { _ = try store.createList(in: .default, name: String(repeating: "n", count: 17), icon: "") }
        Self.expectError(.limitExceeded, field: "icon") { _ = try store.createList(in: .default, name: "n", icon: String(repeating: "i", count: 17)) }
        #expect(recorder.changes.isEmpty)
        let list = try store.createList(in: .default, name: String(repeating: "n", count: 16), icon: "")
        #expect(list.id == ListID(1))
        Self.expectError(.badField, field: "name") { _ = try store.updateList(in: .default, list: list.id, name: "", icon: nil) }
        Self.expectError(.limitExceeded, field: "icon") {
            _ = try store.updateList(in: .default, list: list.id, name: nil, icon: String(repeating: "i", count: 17))
        }
        #expect(try store.summary(in: .default, list: list.id).revision == 1)
    }
}
