import ChecklistModel
import Testing
@testable import ChecklistStore

/// Items' client keys in the store (Protocol/SPEC.md sections 4, 6.7, 6.8):
/// unique per list, settable by INSERT and SET_KEY, kept through deletes,
/// rollbacks, replays, exports and imports; pages start at a key.
@Suite(.timeLimit(.minutes(10))) struct ClientKeyTests {
    static let uuid = "0C5A3E1B-9F2D-4E7A-8B61-3D2F5A7C9E10"

    static func keys(_ store: Store, _ list: ListID) throws -> [String?] {
        try StoreTests.items(store, .default, list).map(\.fields.clientKey)
    }

    static func insert(_ text: String, key: String?) -> PatchOperation {
        .insert(tempRef: nil, position: .end, fields: ItemFields(text: text, clientKey: key))
    }

    @Test func insertAndSetKeyArePagedOut() throws {
        let (store, recorder) = StoreTests.makeStore()
        let list = try store.createList(in: .default, name: "L", icon: "").id
        _ = try store.patch(in: .default, list: list, baseRevision: nil,
                            ops: [Self.insert("Milk", key: Self.uuid), Self.insert("Eggs", key: nil)])
        #expect(try Self.keys(store, list) == [Self.uuid, nil])
        _ = try store.patch(in: .default, list: list, baseRevision: nil,
                            ops: [.setKey(.id(ItemID(2)), "offline-1"), .setKey(.id(ItemID(1)), nil)])
        #expect(try Self.keys(store, list) == [nil, "offline-1"])
        // The committed change keeps the key (the log stores it).
        guard case .patched(let ops)? = recorder.changes.last?.kind else { Issue.record("no patch"); return }
        #expect(ops == [.setKey(ItemID(2), "offline-1"), .setKey(ItemID(1), nil)])
        // A freed key can be given again.
        _ = try store.patch(in: .default, list: list, baseRevision: nil, ops: [Self.insert("Bread", key: Self.uuid)])
        #expect(try Self.keys(store, list) == [nil, "offline-1", Self.uuid])
    }

    @Test func aDuplicateKeyRefusesTheWholeBatch() throws {
        let (store, _) = StoreTests.makeStore()
        let list = try store.createList(in: .default, name: "L", icon: "").id
        _ = try store.patch(in: .default, list: list, baseRevision: nil, ops: [Self.insert("Milk", key: "k1")])
        let before = try store.page(in: .default, list: list, start: .offset(0), limit: 50, filter: .all)
        StoreTests.expectError(.duplicateKey, field: "clientKey") {
            _ = try store.patch(in: .default, list: list, baseRevision: nil,
                                ops: [Self.insert("Eggs", key: "k2"), Self.insert("Bread", key: "k1")])
        }
        // Two inserts of one batch with the same key.
        StoreTests.expectError(.duplicateKey, field: "clientKey") {
            _ = try store.patch(in: .default, list: list, baseRevision: nil,
                                ops: [Self.insert("Eggs", key: "k3"), Self.insert("Bread", key: "k3")])
        }
        StoreTests.expectError(.duplicateKey, field: "clientKey") {
            _ = try store.patch(in: .default, list: list, baseRevision: nil,
                                ops: [Self.insert("Eggs", key: nil), .setKey(.id(ItemID(2)), "k1")])
        }
        // Nothing was applied, and the rolled-back keys are free again.
        #expect(try store.page(in: .default, list: list, start: .offset(0), limit: 50, filter: .all) == before)
        _ = try store.patch(in: .default, list: list, baseRevision: nil, ops: [Self.insert("Eggs", key: "k2"),
                                                                              Self.insert("Jam", key: "k3")])
        #expect(try Self.keys(store, list) == ["k1", "k2", "k3"])
        // Setting an item's own key again is no conflict.
        _ = try store.patch(in: .default, list: list, baseRevision: nil, ops: [.setKey(.id(ItemID(1)), "k1")])
    }

    @Test func keysAreOneTo64Bytes() throws {
        let (store, _) = StoreTests.makeStore()
        let list = try store.createList(in: .default, name: "L", icon: "").id
        StoreTests.expectError(.badField, field: "clientKey") {
            _ = try store.patch(in: .default, list: list, baseRevision: nil, ops: [Self.insert("a", key: "")])
        }
        StoreTests.expectError(.limitExceeded, field: "clientKey") {
            _ = try store.patch(in: .default, list: list, baseRevision: nil,
                                ops: [Self.insert("a", key: String(repeating: "k", count: 65))])
        }
        let longest = String(repeating: "é", count: 32)  // 64 bytes of UTF-8
        _ = try store.patch(in: .default, list: list, baseRevision: nil, ops: [Self.insert("a", key: longest)])
        StoreTests.expectError(.limitExceeded, field: "clientKey") {
            _ = try store.patch(in: .default, list: list, baseRevision: nil,
                                ops: [.setKey(.id(ItemID(1)), longest + "x")])
        }
    }

    @Test func deletingAnItemFreesItsKeyAndRollbackRestoresIt() throws {
        let (store, _) = StoreTests.makeStore()
        let list = try store.createList(in: .default, name: "L", icon: "").id
        _ = try store.patch(in: .default, list: list, baseRevision: nil, ops: [Self.insert("Milk", key: "k1")])
        // Delete, then fail: the key comes back with the item.
        StoreTests.expectError(.notFound) {
            _ = try store.patch(in: .default, list: list, baseRevision: nil, ops: [.delete(.id(ItemID(1))), .delete(.id(ItemID(9)))])
        }
        #expect(try Self.keys(store, list) == ["k1"])
        StoreTests.expectError(.duplicateKey, field: "clientKey") {
            _ = try store.patch(in: .default, list: list, baseRevision: nil, ops: [Self.insert("Other", key: "k1")])
        }
        _ = try store.patch(in: .default, list: list, baseRevision: nil, ops: [.delete(.id(ItemID(1))), Self.insert("New", key: "k1")])
        #expect(try StoreTests.items(store, .default, list).map(\.id) == [ItemID(2)])  // failed batches took no ids
        #expect(try Self.keys(store, list) == ["k1"])
    }

    @Test func pagesStartAtAKeyLikeAtAnAnchor() throws {
        let (store, _) = StoreTests.makeStore()
        let list = try store.createList(in: .default, name: "L", icon: "").id
        _ = try store.patch(in: .default, list: list, baseRevision: nil,
                            ops: (1...5).map { Self.insert("item \($0)", key: "key-\($0)") })
        _ = try store.patch(in: .default, list: list, baseRevision: nil, ops: [.setChecked(.id(ItemID(2)), true)])
        for filter in [RowFilter.all, .checked, .unchecked] {
            for id in 1...5 {
                let byKey = try store.page(in: .default, list: list, start: .key("key-\(id)"), limit: 3, filter: filter)
                let byAnchor = try store.page(in: .default, list: list, start: .anchor(ItemID(UInt64(id))), limit: 3, filter: filter)
                #expect(byKey == byAnchor)
            }
        }
        StoreTests.expectError(.notFound) {
            _ = try store.page(in: .default, list: list, start: .key("nobody"), limit: 3, filter: .all)
        }
    }

    @Test func replayExportRestoreAndImportKeepKeys() throws {
        let (store, recorder) = StoreTests.makeStore()
        let list = try store.createList(in: .default, name: "L", icon: "").id
        _ = try store.patch(in: .default, list: list, baseRevision: nil,
                            ops: [Self.insert("Milk", key: Self.uuid), Self.insert("Eggs", key: nil), .setKey(.id(ItemID(2)), "e")])
        // Replay of the committed changes.
        let (replayed, _) = StoreTests.makeStore()
        for change in recorder.changes { try replayed.replay(change) }
        #expect(try Self.keys(replayed, list) == [Self.uuid, "e"])
        // Export and restore.
        let restored = try StoreSnapshotTests.restored(from: store)
        #expect(try Self.keys(restored, list) == [Self.uuid, "e"])
        StoreTests.expectError(.duplicateKey, field: "clientKey") {
            _ = try restored.patch(in: .default, list: list, baseRevision: nil, ops: [Self.insert("x", key: "e")])
        }
        // Import, whose changes replay too; a duplicate key refuses the staging.
        var staging = store.makeImportStaging()
        try staging.beginList(ImportStaging.ListHeader(namespace: .default, sourceID: ListID(40), name: "I", icon: "",
                                                       revision: 2, nextItemID: ItemID(3)))
        try staging.append(Item(id: ItemID(1), fields: ItemFields(text: "a", clientKey: "ka")))
        StoreTests.expectError(.duplicateKey, field: "clientKey") {
            try staging.append(Item(id: ItemID(2), fields: ItemFields(text: "b", clientKey: "ka")))
        }
        StoreTests.expectError(.limitExceeded, field: "clientKey") {
            try staging.append(Item(id: ItemID(2), fields: ItemFields(text: "b", clientKey: String(repeating: "k", count: 65))))
        }
        try staging.append(Item(id: ItemID(2), fields: ItemFields(text: "b", clientKey: "kb")))
        let result = try store.importLists(staging, mode: .merge, namespace: .default)
        let imported = try #require(result.lists.first).id
        #expect(try Self.keys(store, imported) == ["ka", "kb"])
        let page = try store.page(in: .default, list: imported, start: .key("kb"), limit: 5, filter: .all)
        #expect(page.offset == 1)
        let (again, _) = StoreTests.makeStore()
        for change in recorder.changes { try again.replay(change) }
        #expect(try Self.keys(again, imported) == ["ka", "kb"])
    }
}
