import ChecklistModel
import Synchronization
import Testing
@testable import ChecklistStore

/// Imports: whole lists set atomically, the id rules, and changes that
/// replay into the same store.
@Suite(.timeLimit(.minutes(10))) struct StoreImportTests {
    static let a = Namespace("a")
    static let b = Namespace("b")

    static func header(_ id: UInt64, _ name: String = "Imported", ns: Namespace = a, revision: Revision = 5,
                       next: UInt64 = 100) -> ImportStaging.ListHeader {
        ImportStaging.ListHeader(namespace: ns, sourceID: ListID(id), name: name, icon: "Inbox", revision: revision,
                                 nextItemID: ItemID(next))
    }

    static func item(_ id: UInt64, _ text: String = "item", checked: Bool = false) -> Item {
        Item(id: ItemID(id), fields: ItemFields(text: text, checked: checked, due: id % 3 == 0 ? 1_700_000_000 : nil,
                                                remind: id % 2 == 0, price: id % 5 == 0 ? -250 : nil))
    }

    /// Lists 1 (a), 2 (b), 3 (a, deleted), 4 (a) with items.
    static func store(_ recorder: ChangeRecorder) throws -> Store {
        let store = Store(limits: Limits(maxTextBytes: 16), treeShape: RowTreeShape(leafCapacity: 4, innerCapacity: 4),
                          onCommit: recorder.record)
        for ns in [a, b, a, a] {
            let list = try store.createList(in: ns, name: "Old", icon: "")
            _ = try store.patch(in: ns, list: list.id, baseRevision: nil,
                                ops: (0..<6).map { .insert(tempRef: nil, position: .end, fields: ItemFields(text: "old \($0)")) })
        }
        _ = try store.deleteList(in: a, list: ListID(3))
        return store
    }

    @Test("merge: an own id is replaced, a never-used id is kept, a deleted or foreign id gets the next one")
    func mergeIDRules() throws {
        let recorder = ChangeRecorder()
        let store = try Self.store(recorder)
        var staging = store.makeImportStaging()
        // 1: a's own list (revision 2 now) -> replaced, revision max(3, 1) = 3.
        try staging.beginList(Self.header(1, "Mine", revision: 1))
        try staging.append(Self.item(7, "seven"))
        // 2: b's list -> new id 9 (after the kept 8), b untouched.
        try staging.beginList(Self.header(2, "Theirs"))
        // 3: deleted -> new id 10.
        try staging.beginList(Self.header(3, "Gone", revision: 9))
        try staging.append(Self.item(1))
        try staging.append(Self.item(2))
        // 8: never handed out -> kept.
        try staging.beginList(Self.header(8, "Fresh", revision: 40))
        let before = recorder.changes.count
        let result = try store.importLists(staging, mode: .merge, namespace: Self.a)

        #expect(result.lists.map(\.id) == [ListID(1), ListID(9), ListID(10), ListID(8)])
        #expect(result.lists.map(\.revision) == [3, 5, 9, 40])
        #expect(result.lists.map(\.replaced) == [true, false, false, false])
        #expect(result.deleted.isEmpty)
        #expect(store.lists(in: Self.a).map(\.id) == [ListID(1), ListID(4), ListID(8), ListID(9), ListID(10)])
        #expect(store.lists(in: Self.b).map(\.name) == ["Old"])
        #expect(store.nextListID == ListID(11))
        let one = try store.page(in: Self.a, list: ListID(1), start: .offset(0), limit: 10, filter: .all)
        #expect(one.items == [Self.item(7, "seven")])
        // Item ids continue after the snapshot's nextItemID.
        let ok = try store.patch(in: Self.a, list: ListID(1), baseRevision: 3,
                                 ops: [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "new"))])
        #expect(ok.ids.first?.id == ItemID(100))

        // One change per list, all `listImported`, in snapshot order.
        let changes = Array(recorder.changes[before..<(before + 4)])
        #expect(changes.map(\.list) == [ListID(1), ListID(9), ListID(10), ListID(8)])
        #expect(changes.allSatisfy { if case .listImported = $0.kind { true } else { false } })
    }

    @Test("replace deletes the namespace's other lists, and only those")
    func replaceMode() throws {
        let recorder = ChangeRecorder()
        let store = try Self.store(recorder)
        var staging = store.makeImportStaging()
        try staging.beginList(Self.header(4, "Kept id"))
        let before = recorder.changes.count
        let result = try store.importLists(staging, mode: .replace, namespace: Self.a)
        #expect(result.deleted == [ListID(1)])
        #expect(store.lists(in: Self.a).map(\.id) == [ListID(4)])
        #expect(store.lists(in: Self.b).count == 1)
        let kinds = recorder.changes[before...].map { change -> String in
            switch change.kind {
            case .listDeleted: return "deleted \(change.list) r\(change.revision)"
            case .listImported: return "imported \(change.list) r\(change.revision)"
            default: return "other"
            }
        }
        #expect(kinds == ["deleted 1 r3", "imported 4 r5"])
    }

    @Test("an import is one commit: its changes reach onCommitGroup in one call, a request's alone")
    func importIsOneCommit() throws {
        let groups = Mutex<[[Change]]>([])
        let store = Store(onCommitGroup: { changes in groups.withLock { $0.append(changes) } })
        let old = try store.createList(in: Self.a, name: "Old", icon: "")
        var staging = store.makeImportStaging()
        try staging.beginList(Self.header(50, "New"))
        try staging.append(Self.item(1))
        try staging.beginList(Self.header(51, "Newer"))
        try store.importLists(staging, mode: .replace, namespace: Self.a)
        let seen = groups.withLock { $0 }
        #expect(seen.map(\.count) == [1, 3])
        #expect(seen[1].map(\.list) == [old.id, ListID(50), ListID(51)])
        // An import with nothing to do commits nothing.
        try store.importLists(store.makeImportStaging(), mode: .merge, namespace: Self.a)
        #expect(groups.withLock { $0.count } == 2)
    }

    @Test("the changes of an import replay into a copy of the store exactly")
    func changesReplay() throws {
        let recorder = ChangeRecorder()
        let store = try Self.store(recorder)
        var staging = store.makeImportStaging()
        try staging.beginList(Self.header(1, "Mine", revision: 30, next: 500))
        for id in stride(from: 400, to: 1, by: -7) { try staging.append(Self.item(UInt64(id), "t\(id)", checked: id % 2 == 0)) }
        try staging.beginList(Self.header(3, "Again"))
        try store.importLists(staging, mode: .replace, namespace: Self.a)

        let copy = Store(limits: .default, treeShape: RowTreeShape(leafCapacity: 4, innerCapacity: 4), onCommit: { _ in })
        for change in recorder.changes { try copy.replay(change) }
        #expect(StoreContents(copy) == StoreContents(store))
    }

    @Test("staging refuses what the store would not hold, naming the list and the item")
    func stagingErrors() throws {
        let store = Store(limits: Limits(maxTextBytes: 8), onCommit: { _ in })
        func failure(_ body: (inout ImportStaging) throws(ChecklistError) -> Void) -> ChecklistError? {
            var staging = store.makeImportStaging(maxLists: 2)
            do { try body(&staging) } catch { return error }
            return nil
        }
        let emptyName = failure { s throws(ChecklistError) in try s.beginList(Self.header(7, "")) }
        #expect(emptyName?.field == "name")
        #expect(emptyName?.message.contains("list 7") == true)
        #expect(failure { s throws(ChecklistError) in try s.beginList(Self.header(7, "x", revision: 0)) }?.field == "revision")
        #expect(failure { s throws(ChecklistError) in try s.beginList(Self.header(7, "far too long a name")) }?.code == .limitExceeded)
        let tooLong = failure { s throws(ChecklistError) in
            try s.beginList(Self.header(7, "x"))
            try s.append(Self.item(3, "a text over eight bytes"))
        }
        #expect(tooLong?.code == .limitExceeded)
        #expect(tooLong?.field == "text")
        #expect(tooLong?.message.contains("list 7 of the import, item 3") == true)
        #expect(failure { s throws(ChecklistError) in
            try s.beginList(Self.header(7, "x", next: 10))
            try s.append(Self.item(10))
        }?.field == "id")
        #expect(failure { s throws(ChecklistError) in
            try s.beginList(Self.header(7, "x"))
            try s.append(Self.item(4))
            try s.append(Self.item(4))
        }?.message.contains("appears twice") == true)
        #expect(failure { s throws(ChecklistError) in
            try s.beginList(Self.header(7, "x"))
            try s.beginList(Self.header(7, "y"))
        }?.field == "list")
        #expect(failure { s throws(ChecklistError) in
            for id in 1...3 { try s.beginList(Self.header(UInt64(id), "x")) }
        }?.field == "lists")
        #expect(store.lists(in: Self.a).isEmpty)
    }

    @Test("an offline import keeps each list's namespace; replace then covers the whole store")
    func offlineNamespaces() throws {
        let store = try Self.store(ChangeRecorder())
        var staging = store.makeImportStaging(enforcingLimits: false)
        try staging.beginList(Self.header(2, "b's, again", ns: Self.b))
        try staging.beginList(Self.header(20, "c's", ns: Namespace("c")))
        let result = try store.importLists(staging, mode: .replace, namespace: nil)
        #expect(result.lists.map(\.id) == [ListID(2), ListID(20)])
        #expect(result.deleted == [ListID(1), ListID(4)])
        #expect(store.lists(in: Self.b).map(\.name) == ["b's, again"])
        #expect(store.lists(in: Namespace("c")).map(\.id) == [ListID(20)])
        #expect(store.lists(in: Self.a).isEmpty)
    }
}
