import ChecklistModel
import ChecklistSnapshot

// A document as a snapshot (Protocol/SNAPSHOT.md), and back.
extension ChecklistDocument {
    /// The document as the bytes of a snapshot file, ready for IMPORT.
    ///
    /// Missing values are filled in: a list without an id gets one from
    /// `firstUnkeptListID` up (so an import adds it rather than replacing a
    /// list), items without an id the next ids after the list's highest,
    /// `nextItemID` one past the highest item id, the revision 1 for an
    /// empty list and 2 otherwise (created, then filled).
    ///
    /// - Throws: `TransferError` for list ids given twice or item ids given
    ///   twice in one list.
    public func snapshotFile(source: String, createdAt: Int64, namespace: Namespace = .default) throws -> [UInt8] {
        let lists = try resolved()
        var output: [UInt8] = []
        let header = SnapshotHeader(createdAt: createdAt, source: source, listCount: UInt64(lists.count),
                                    itemCount: UInt64(itemCount), startLSN: 0,
                                    nextListID: ListID((lists.map(\.id.rawValue).max() ?? 0) + 1))
        let writer = try SnapshotWriter(header: header, options: .init(level: 6, compressionThreads: 1)) { bytes in
            output.append(contentsOf: bytes)
        }
        for list in lists {
            try writer.writeList(SnapshotList(namespace: namespace, id: list.id, name: list.name, icon: list.icon,
                                              revision: list.revision, nextItemID: list.nextItemID,
                                              itemCount: UInt64(list.items.count)))
            for item in list.items { try writer.writeItem(item) }
        }
        try writer.finish(endLSN: 0)
        return output
    }

    /// A list with every id and count settled, in ascending id order.
    struct ResolvedList {
        var id: ListID
        var name: String
        var icon: String
        var revision: Revision
        var nextItemID: ItemID
        var items: [Item]
    }

    func resolved() throws -> [ResolvedList] {
        var ids = ListIDAllocator()
        var out: [ResolvedList] = []
        for (index, list) in lists.enumerated() {
            let what = "list \(index + 1) (\"\(list.name)\")"
            let id = try ids.assign(list.id?.rawValue, what)
            var itemIDs = Set<UInt64>()
            var highest = list.items.compactMap { $0.id?.rawValue }.max() ?? 0
            var items: [Item] = []
            items.reserveCapacity(list.items.count)
            for entry in list.items {
                let itemID = try Self.itemID(entry.id?.rawValue, highest: &highest, what)
                guard itemIDs.insert(itemID).inserted else { throw TransferError("\(what): item id \(itemID) is used twice") }
                items.append(Item(id: ItemID(itemID), fields: entry.fields))
            }
            let next = Self.nextItemID(given: list.nextItemID?.rawValue, highestAfterNumbering: highest)
            out.append(ResolvedList(id: ListID(id), name: list.name, icon: list.icon,
                                    revision: list.revision ?? Self.revision(itemCount: items.count), nextItemID: ItemID(next), items: items))
        }
        return out.sorted { $0.id < $1.id }
    }

    /// The revision of a list the file gives none: 1 for an empty list,
    /// 2 otherwise (created, then filled).
    static func revision(itemCount: Int) -> Revision {
        itemCount == 0 ? 1 : 2
    }

    /// One past the highest item id once every item has one, or the
    /// file's own if higher.
    static func nextItemID(given: UInt64?, highestAfterNumbering highest: UInt64) -> UInt64 {
        max(given ?? 0, highest + 1)
    }

    /// An item's id: the file's, or the next after the highest so far.
    static func itemID(_ given: UInt64?, highest: inout UInt64, _ what: String) throws -> UInt64 {
        if let given {
            guard given != 0 else { throw TransferError("\(what): item id 0 (ids start at 1)") }
            return given
        }
        highest += 1
        return highest
    }

    /// Reads a whole snapshot into a document (tests, small snapshots).
    public init(snapshot reader: SnapshotReader) throws {
        var lists: [List] = []
        while let record = try reader.next() {
            switch record {
            case .list(let l):
                lists.append(List(id: l.id, name: l.name, icon: l.icon, revision: l.revision, nextItemID: l.nextItemID))
            case .item(let item):
                lists[lists.count - 1].items.append(Entry(id: item.id, fields: item.fields))
            case .idempotency:
                break  // a server's memory of keys, not list data
            }
        }
        self.init(lists: lists)
    }
}

/// Gives lists their ids: the file's own, or from
/// `ChecklistDocument.firstUnkeptListID` up (never kept by an import), each
/// used once.
struct ListIDAllocator {
    private var seen = Set<UInt64>()
    private var unkept = ChecklistDocument.firstUnkeptListID

    mutating func assign(_ given: UInt64?, _ what: String) throws -> UInt64 {
        let id: UInt64
        if let given {
            guard given != 0 else { throw TransferError("\(what): list id 0 (ids start at 1)") }
            id = given
        } else {
            while seen.contains(unkept) { unkept += 1 }
            id = unkept
        }
        guard seen.insert(id).inserted else { throw TransferError("\(what): list id \(id) is used twice") }
        return id
    }
}
