import ChecklistModel
import ChecklistFrames
import ChecklistWire

/// Everything one namespace holds, as a client sees it: LIST_LISTS and every
/// row of every list, paged with GET_PAGE. Two equal snapshots mean nothing
/// was changed in between (revisions included).
public struct StoreSnapshot: Sendable, Equatable {
    public var lists: [ListSummary]
    public var rows: [ListID: [Item]]

    /// Reads the snapshot over `connection`, which must be past HELLO.
    public static func read(over connection: FrameSocket, limits: Limits) throws -> StoreSnapshot {
        var id: UInt32 = 0x5000_0000
        func next() -> UInt32 { id += 1; return id }
        let listsID = next()
        try connection.send(.listLists(ListLists()), id: listsID)
        let lists = try connection.receive(listsID, "LISTS") { message -> [ListSummary]? in
            if case .lists(let l) = message { return l.lists }
            return nil
        }
        var rows: [ListID: [Item]] = [:]
        let pageRows = UInt64(max(1, min(limits.maxPageRows, 1000)))
        for list in lists {
            var items: [Item] = []
            while true {
                let pageID = next()
                try connection.send(.getPage(GetPage(list: list.id, start: .offset(UInt64(items.count)), limit: pageRows)),
                                    id: pageID)
                let page = try connection.receive(pageID, "PAGE of list \(list.id)") { message -> PageMessage? in
                    if case .page(let p) = message { return p }
                    return nil
                }
                items += page.rows
                if page.rows.isEmpty || UInt64(items.count) >= page.header.total { break }
            }
            rows[list.id] = items
        }
        return StoreSnapshot(lists: lists, rows: rows)
    }

    /// The first difference from `other`, in words, or nil.
    public func difference(from other: StoreSnapshot) -> String? {
        if lists != other.lists {
            return "LIST_LISTS changed: \(other.lists.map(Self.describe)) became \(lists.map(Self.describe))"
        }
        for list in lists where rows[list.id] != other.rows[list.id] {
            return "the rows of list \(list.id) changed"
        }
        return nil
    }

    private static func describe(_ s: ListSummary) -> String {
        "\(s.id) \"\(s.name)\" rev \(s.revision) items \(s.itemCount)"
    }
}

/// The list every case gets: created before the "before" snapshot and
/// deleted after the "after" one. Three rows: `alpha` (unchecked), `bravo`
/// (checked), `charlie` (unchecked), at revision 2.
public struct Fixture: Sendable {
    public var list: ListID
    public var items: [ItemID]
    public var revision: Revision

    static func create(over connection: FrameSocket, name: String) throws -> Fixture {
        try connection.send(.createList(CreateList(name: name, icon: "No Icon")), id: 0x4000_0001)
        let summary = try connection.receive(0x4000_0001, "LIST") { message -> ListSummary? in
            if case .listCreated(let info) = message { return info.summary }
            return nil
        }
        let ops: [PatchOperation] = [
            .insert(tempRef: 1, position: .end, fields: ItemFields(text: "alpha")),
            .insert(tempRef: 2, position: .end, fields: ItemFields(text: "bravo", checked: true)),
            .insert(tempRef: 3, position: .end, fields: ItemFields(text: "charlie")),
        ]
        try connection.send(.patch(Patch(list: summary.id, ops: ops)), id: 0x4000_0002)
        let ok = try connection.receive(0x4000_0002, "PATCH_OK") { message -> PatchOK? in
            if case .patchOK(let ok) = message { return ok }
            return nil
        }
        let ids = ok.ids.sorted { $0.tempRef < $1.tempRef }.map(\.id)
        guard ids.count == 3 else { throw CaseFailure("the fixture's PATCH_OK has \(ids.count) ids, not 3") }
        return Fixture(list: summary.id, items: ids, revision: ok.revision)
    }

    func delete(over connection: FrameSocket) throws {
        try connection.send(.deleteList(DeleteList(list: list)), id: 0x4000_0003)
        _ = try connection.receive(0x4000_0003, "LIST_DELETED") { message -> Bool? in
            if case .listDeleted = message { return true }
            return nil
        }
    }
}
