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
        var seen = Set<UInt64>()
        var unkept = Self.firstUnkeptListID
        var out: [ResolvedList] = []
        for (index, list) in lists.enumerated() {
            let what = "list \(index + 1) (\"\(list.name)\")"
            let id: UInt64
            if let given = list.id?.rawValue {
                guard given != 0 else { throw TransferError("\(what): list id 0 (ids start at 1)") }
                id = given
            } else {
                while seen.contains(unkept) { unkept += 1 }
                id = unkept
            }
            guard seen.insert(id).inserted else { throw TransferError("\(what): list id \(id) is used twice") }
            var itemIDs = Set<UInt64>()
            var highest = list.items.compactMap { $0.id?.rawValue }.max() ?? 0
            var items: [Item] = []
            items.reserveCapacity(list.items.count)
            for entry in list.items {
                let itemID: UInt64
                if let given = entry.id?.rawValue {
                    guard given != 0 else { throw TransferError("\(what): item id 0 (ids start at 1)") }
                    itemID = given
                } else {
                    highest += 1
                    itemID = highest
                }
                guard itemIDs.insert(itemID).inserted else { throw TransferError("\(what): item id \(itemID) is used twice") }
                items.append(Item(id: ItemID(itemID), fields: entry.fields))
            }
            let next = max(list.nextItemID?.rawValue ?? 0, highest + 1)
            out.append(ResolvedList(id: ListID(id), name: list.name, icon: list.icon,
                                    revision: list.revision ?? (items.isEmpty ? 1 : 2), nextItemID: ItemID(next), items: items))
        }
        return out.sorted { $0.id < $1.id }
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
