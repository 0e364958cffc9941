import ChecklistModel
import ChecklistRandom
@testable import ChecklistStore
import Testing

/// Export, restore and replay: a store can be rebuilt exactly from a
/// snapshot or from its committed changes.
@Suite(.timeLimit(.minutes(10))) struct StoreSnapshotTests {
    /// A store with a few lists in two namespaces, some deleted, with varied rows.
    static func populatedStore(_ recorder: ChangeRecorder = ChangeRecorder()) throws -> Store {
        var rng = SplitMix64(seed: 42)
        let store = Store(limits: Limits(maxBatchOps: 100), treeShape: RowTreeShape(leafCapacity: 4, innerCapacity: 4),
                          onCommit: recorder.record)
        for (i, ns) in [Namespace("a"), Namespace("b"), Namespace("a"), Namespace("b"), Namespace("a")].enumerated() {
            let list = try store.createList(in: ns, name: "List \(i)", icon: i % 2 == 0 ? "Groceries" : "")
            var generator = ValidBatches(items: [], nextItemID: 1)
            for _ in 0..<(i * 3) {
                _ = try store.patch(in: ns, list: list.id, baseRevision: nil, ops: generator.batch(40, minRows: 30, maxRows: 150, &rng))
            }
        }
        _ = try store.deleteList(in: Namespace("b"), list: ListID(4))
        _ = try store.deleteList(in: Namespace("a"), list: ListID(5))
        return store
    }

    /// Copies every list of `source` into a new store through export/restore.
    static func restored(from source: Store, shape: RowTreeShape = .standard) throws -> Store {
        let target = Store(limits: Limits(maxBatchOps: 100), treeShape: shape, onCommit: { _ in })
        var exported: [(ExportedList, [Item])] = []
        let next = source.exportLists(in: nil) { list, forEachRow in
            var items: [Item] = []
            forEachRow { items.append($0.item) }
            exported.append((list, items))
        }
        for (list, items) in exported { try target.restoreList(list, rows: items) }
        target.restoreNextListID(next)
        return target
    }

    @Test("export then restore gives the same store, which then behaves the same")
    func roundTrip() throws {
        let source = try Self.populatedStore()
        let copy = try Self.restored(from: source)
        #expect(StoreContents(copy) == StoreContents(source))
        #expect(copy.nextListID == ListID(6))
        #expect(copy.lists(in: Namespace("a")) == source.lists(in: Namespace("a")))

        // Both go on the same way: same item ids, same list ids, same revisions.
        let ops: [PatchOperation] = [.insert(tempRef: 1, position: .index(2), fields: ItemFields(text: "new")), .toggle(.temp(1))]
        #expect(try copy.patch(in: Namespace("a"), list: ListID(3), baseRevision: nil, ops: ops)
                == source.patch(in: Namespace("a"), list: ListID(3), baseRevision: nil, ops: ops))
        #expect(try copy.createList(in: Namespace("c"), name: "New", icon: "")
                == source.createList(in: Namespace("c"), name: "New", icon: ""))
        #expect(StoreContents(copy) == StoreContents(source))
    }

    @Test("export visits one namespace's lists in id order")
    func exportOneNamespace() throws {
        let store = try Self.populatedStore()
        var seen: [ListID] = []
        var rows = 0
        store.exportLists(in: Namespace("a")) { list, forEachRow in
            #expect(list.namespace == Namespace("a"))
            seen.append(list.summary.id)
            var count = 0
            forEachRow { _ in count += 1 }
            #expect(UInt64(count) == list.summary.itemCount)
            rows += count
        }
        #expect(seen == [ListID(1), ListID(3)])
        #expect(rows > 0)
    }

    /// `populatedStore` with what it committed, and an empty store with a
    /// recorder of what it passes to `onCommit`.
    static func sourceAndEmptyReplica() throws -> (ChangeRecorder, Store, ChangeRecorder, Store) {
        let recorder = ChangeRecorder()
        let source = try populatedStore(recorder)
        let notified = ChangeRecorder()
        return (recorder, source, notified, Store(onCommit: notified.record))
    }

    @Test("replaying the committed changes rebuilds the store")
    func replay() throws {
        let (recorder, source, notified, replica) = try Self.sourceAndEmptyReplica()
        for change in recorder.changes { try replica.replay(change) }
        #expect(StoreContents(replica) == StoreContents(source))
        #expect(notified.changes.isEmpty)

        // Replaying on top of a restored snapshot: only what came after it.
        let snapshot = try Self.restored(from: source)
        let later = try source.patch(in: Namespace("a"), list: ListID(1), baseRevision: nil,
                                     ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "later"))])
        let change = Change(namespace: Namespace("a"), list: ListID(1), revision: later.revision, kind: .patched(later.applied))
        try snapshot.replay(change, notify: false)
        #expect(StoreContents(snapshot) == StoreContents(source))
    }

    @Test("a replay decided under the lock sees the list's revision, or none, and applies only when told")
    func replayDecided() throws {
        let (recorder, source, notified, replica) = try Self.sourceAndEmptyReplica()
        // Each change twice: the second time its list is already at its
        // revision (or gone). Decided as recovery decides (`ReplayRule`).
        for change in recorder.changes {
            var seen: [Revision?] = []
            let decide = { (current: Revision?) -> Bool in
                seen.append(current)
                guard let current else { return change.isCreationForTest }
                return change.revision > current
            }
            let applied = try replica.replay(change, if: decide)
            #expect(applied)
            let again = try replica.replay(change, if: decide)
            #expect(!again)
            if case .listCreated = change.kind { #expect(seen[0] == nil) } else { #expect(seen[0] == change.revision - 1) }
            // After a deletion the list is gone: no revision.
            #expect(seen[1] == (change.isDeletionForTest ? nil : change.revision))
        }
        #expect(StoreContents(replica) == StoreContents(source))
        #expect(notified.changes.isEmpty)
        // Another namespace's list has no revision there.
        let list = try replica.createList(in: Namespace("x"), name: "X", icon: "")
        var other: Revision?? = .none
        let applied = try replica.replay(Change(namespace: Namespace("y"), list: list.id, revision: 2, kind: .listDeleted)) {
            other = $0
            return false
        }
        #expect(!applied && other == .some(nil))
        #expect(try replica.summary(in: Namespace("x"), list: list.id).revision == 1)
    }

    @Test("replay refuses changes that do not follow on")
    func replayErrors() throws {
        let recorder = ChangeRecorder()
        let store = Store(onCommit: recorder.record)
        let list = try store.createList(in: .default, name: "L", icon: "")
        let before = StoreContents(store)
        // Not the next revision: conflict, with the current revision.
        do {
            try store.replay(Change(namespace: .default, list: list.id, revision: 3, kind: .listUpdated(name: "M", icon: "")))
            Issue.record("expected a conflict")
        } catch {
            #expect(error.code == .conflict && error.revision == 1)
        }
        // A list id in use, or used before, cannot be created again.
        StoreTests.expectError(.conflict) {
            try store.replay(Change(namespace: .default, list: list.id, revision: 1, kind: .listCreated(name: "L", icon: "")))
        }
        _ = try store.deleteList(in: .default, list: list.id)
        StoreTests.expectError(.conflict) {
            try store.replay(Change(namespace: .default, list: list.id, revision: 1, kind: .listCreated(name: "L", icon: "")))
        }
        // Another namespace's list is not found.
        let other = try store.createList(in: Namespace("x"), name: "X", icon: "")
        StoreTests.expectError(.notFound, message: "list \(other.id) not found") {
            try store.replay(Change(namespace: .default, list: other.id, revision: 2, kind: .listDeleted))
        }
        #expect(StoreContents(store) != before)  // the deletion and creation above
        // notify: true hands the replayed change to onCommit.
        let count = recorder.changes.count
        let update = Change(namespace: Namespace("x"), list: other.id, revision: 2, kind: .listUpdated(name: "Y", icon: ""))
        try store.replay(update, notify: true)
        #expect(recorder.changes.count == count + 1 && recorder.changes.last == update)
    }

    @Test("restore checks what it is given")
    func restoreErrors() throws {
        let store = Store()
        let existing = try store.createList(in: .default, name: "L", icon: "")
        func exported(_ id: UInt64, name: String = "R", revision: Revision = 4, next: UInt64 = 10) -> ExportedList {
            ExportedList(namespace: .default,
                         summary: ListSummary(id: ListID(id), name: name, icon: "", itemCount: 0, uncheckedCount: 0, revision: revision),
                         nextItemID: ItemID(next))
        }
        let row = { (id: UInt64) in Item(id: ItemID(id), fields: ItemFields(text: "row \(id)")) }
        StoreTests.expectError(.conflict) { try store.restoreList(exported(existing.id.rawValue), rows: []) }
        StoreTests.expectError(.badField, field: "id") { try store.restoreList(exported(7), rows: [row(1), row(1)]) }
        StoreTests.expectError(.badField, field: "id") { try store.restoreList(exported(7), rows: [row(10)]) }
        StoreTests.expectError(.badField, field: "id") { try store.restoreList(exported(7), rows: [row(0)]) }
        StoreTests.expectError(.badField, field: "name") { try store.restoreList(exported(7, name: ""), rows: []) }
        StoreTests.expectError(.badField, field: "revision") { try store.restoreList(exported(7, revision: 0), rows: []) }
        #expect(store.lists(in: .default).map(\.id) == [existing.id])

        // Restored lists keep their ids, counters and revision; counts come from the rows.
        try store.restoreList(exported(7), rows: [row(3), row(9)])
        #expect(try store.summary(in: .default, list: ListID(7))
                == ListSummary(id: ListID(7), name: "R", icon: "", itemCount: 2, uncheckedCount: 2, revision: 4))
        #expect(store.nextListID == ListID(8))
        let next = try store.patch(in: .default, list: ListID(7), baseRevision: 4,
                                   ops: [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "x"))])
        #expect(next.ids == [.init(tempRef: 1, id: ItemID(10))] && next.revision == 5)
        store.restoreNextListID(ListID(3))
        #expect(store.nextListID == ListID(8))
    }
}

private extension Change {
    var isDeletionForTest: Bool {
        if case .listDeleted = kind { true } else { false }
    }

    var isCreationForTest: Bool {
        if case .listCreated = kind { true } else { false }
    }
}
