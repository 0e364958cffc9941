import ChecklistStorage
import ChecklistModel
import ChecklistServer
import ChecklistSnapshot
import ChecklistStore
import Foundation
import Testing

/// A store restored with its leaves built on the inflating threads
/// (`StoreRestoreSink.rowBuilding`) holds what a store restored row by row
/// on one thread holds, for lists of every size cut into many members.
@Suite(.timeLimit(.minutes(1))) struct ParallelRestoreTests {
    /// Lists of 0 to 20,000 rows, ids in runs or spaced out.
    static let sizes = [0, 1, 2, 3, 0, 127, 128, 129, 1000, 20_000, 1, 5000]

    static func sourceStore() throws -> Store {
        let store = Store()
        for (n, size) in sizes.enumerated() {
            let list = ExportedList(namespace: n % 3 == 0 ? Namespace("other") : .default,
                                    summary: ListSummary(id: ListID(UInt64(n * 2 + 1)), name: "List \(n)", icon: "", itemCount: 0,
                                                         uncheckedCount: 0, revision: 3),
                                    nextItemID: ItemID(UInt64(size * 3 + 5)))
            var rows: [Item] = []
            for i in 0..<size {
                let id: UInt64 = n % 2 == 0 ? UInt64(i + 1) : UInt64(i * 3 + 2)
                let text: String = "row \(i) of \(n)" + (i % 50 == 0 ? " Ünïcödé ✓" : "")
                let due: Int64? = i % 7 == 0 ? Int64(i) : nil
                let price: Int64? = i % 9 == 0 ? -Int64(i) : nil
                rows.append(Item(id: ItemID(id), fields: ItemFields(text: text, checked: i % 3 == 0, due: due, remind: i % 4 == 0, price: price)))
            }
            try store.restoreList(list, rows: rows)
        }
        return store
    }

    /// Writes `store` with small blocks: many gzip members.
    static func write(_ store: Store, to path: String) throws {
        var lists: [(ExportedList, [Item])] = []
        let next = store.exportLists(in: nil) { list, forEachRow in
            var items: [Item] = []
            forEachRow { items.append($0.item) }
            lists.append((list, items))
        }
        lists.sort { $0.0.summary.id < $1.0.summary.id }
        let header = SnapshotHeader(createdAt: 1, source: "tests", listCount: UInt64(lists.count),
                                    itemCount: UInt64(lists.reduce(0) { $0 + $1.1.count }), startLSN: 0, nextListID: next)
        let writer = try SnapshotWriter(path: path, header: header, options: .init(level: 1, blockBytes: 2048, compressionThreads: 2))
        for (list, items) in lists {
            try writer.writeList(SnapshotList(namespace: list.namespace, id: list.summary.id, name: list.summary.name,
                                              icon: list.summary.icon, revision: list.summary.revision, nextItemID: list.nextItemID,
                                              itemCount: UInt64(items.count)))
            for item in items { try writer.writeItem(item) }
        }
        _ = try writer.finish(endLSN: 0)
    }

    static func restore(_ path: String, threads: Int, building: Bool) throws -> Store {
        let store = Store()
        let sink = StoreRestoreSink(store: store)
        let reader = try SnapshotReader(path: path, inflateThreads: threads, rowBuilding: building ? sink.rowBuilding : nil)
        _ = try reader.readAll(into: sink)
        return store
    }

    @Test("leaves built on the workers make the store one thread makes")
    func sameStore() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let source = try Self.sourceStore()
        let path = directory.path + "/many.ckss.gz"
        try Self.write(source, to: path)
        let serial = try Self.restore(path, threads: 1, building: false)
        let built = try Self.restore(path, threads: 3, building: true)
        #expect(StoreImage(serial) == StoreImage(source))
        #expect(StoreImage(built) == StoreImage(serial))
        // Edits after the restore find the rows where they are.
        for store in [serial, built] {
            _ = try store.patch(in: Namespace("other"), list: ListID(19), baseRevision: nil, ops: [
                .delete(.id(ItemID(3 * 700 + 2))),
                .insert(tempRef: nil, position: .index(5000), fields: ItemFields(text: "new")),
            ])
        }
        #expect(StoreImage(built) == StoreImage(serial))
    }

    @Test("an id repeated inside a list fails the restore as row by row does")
    func repeatedID() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.path + "/repeat.ckss.gz"
        let header = SnapshotHeader(createdAt: 1, source: "tests", listCount: 1, itemCount: 3000, startLSN: 0, nextListID: ListID(9))
        let writer = try SnapshotWriter(path: path, header: header, options: .init(level: 1, blockBytes: 2048, compressionThreads: 2))
        try writer.writeList(SnapshotList(namespace: .default, id: ListID(4), name: "L", icon: "", revision: 2,
                                          nextItemID: ItemID(5000), itemCount: 3000))
        for i in 0..<3000 { try writer.writeItem(Item(id: ItemID(UInt64(i == 2500 ? 700 : i + 1)), fields: ItemFields(text: "row \(i)"))) }
        _ = try writer.finish(endLSN: 0)
        var errors: [String] = []
        for (threads, building) in [(1, false), (3, true)] {
            do {
                _ = try Self.restore(path, threads: threads, building: building)
                Issue.record("restored with a repeated id")
            } catch {
                errors.append("\(error)")
            }
        }
        #expect(errors.count == 2 && errors[0] == errors[1])
        #expect(errors.first?.contains("700") == true)
    }
}
