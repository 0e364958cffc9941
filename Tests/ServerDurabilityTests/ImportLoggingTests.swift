import ChecklistModel
import ChecklistPersistence
import ChecklistStore
import Foundation
import Testing

/// An import reaches the write-ahead log as one record (all of it survives
/// a crash, or none), encoded by the log's flusher from the store's
/// copy-on-write rows rather than under the store's lock.
@Suite(.timeLimit(.minutes(10))) struct ImportLoggingTests {
    /// A store whose commits go to `log`.
    static func store(logging log: WriteAheadLog) -> Store {
        Store(onCommitGroup: { changes in _ = try? log.append(changes) })
    }

    /// Stages lists `ids` with `items` rows each.
    static func staging(_ store: Store, ids: [UInt64], items: Int) throws -> ImportStaging {
        var staging = store.makeImportStaging()
        for id in ids {
            try staging.beginList(ImportStaging.ListHeader(namespace: .default, sourceID: ListID(id), name: "Imported \(id)",
                                                           icon: "Inbox", revision: 3, nextItemID: ItemID(UInt64(items) + 1)))
            for i in 1...items {
                try staging.append(Item(id: ItemID(UInt64(i)), fields: ItemFields(text: "row \(i) of \(id)", checked: i % 3 == 0)))
            }
        }
        return staging
    }

    @Test("an import changed before the flusher wrote it is logged as it was committed")
    func deferredEncodingSeesTheCommittedRows() throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        // The flusher writes nothing before close(): every later change to
        // the imported list happens before its record is encoded.
        let log = try WriteAheadLog(directory: dir.path, nextLSN: 1,
                                    options: .init(policy: .everysec, everysecIntervalNanoseconds: 3_600_000_000_000))
        let store = Self.store(logging: log)
        let old = try store.createList(in: .default, name: "Old", icon: "")
        try store.importLists(try Self.staging(store, ids: [40, 41], items: 2_000), mode: .replace, namespace: .default)
        // Edit the imported list in place: the rows the log still has to
        // encode must not see this.
        let deletes = (1...500).map { PatchOperation.delete(.id(ItemID(UInt64($0 * 2)))) }
        _ = try store.patch(in: .default, list: ListID(40), baseRevision: nil, ops: deletes)
        _ = try store.patch(in: .default, list: ListID(40), baseRevision: nil,
                            ops: [.setText(.id(ItemID(1)), "edited"), .insert(tempRef: nil, position: .index(0), fields: ItemFields(text: "new"))])
        #expect(log.durableLSN == 0)
        try log.close()

        let (recovered, report) = try recoverStore(dir.path)
        #expect(report.recordsReplayed == 4) // create, the import's group, two patches
        #expect(StoreImage(recovered) == StoreImage(store))
        #expect(throws: ChecklistError.self) { try recovered.summary(in: .default, list: old.id) }
        #expect(try recovered.summary(in: .default, list: ListID(40)).itemCount == 1_501)
    }

    @Test("a log torn inside an import's record keeps none of the import")
    func tornImportRecordKeepsNoneOfIt() throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        // Without zeros laid ahead, the segment's size is where its records end.
        let log = try WriteAheadLog(directory: dir.path, nextLSN: 1, options: .init(policy: .always, preallocationBytes: 0))
        let store = Self.store(logging: log)
        let kept = try store.createList(in: .default, name: "Kept", icon: "")
        _ = try store.patch(in: .default, list: kept.id, baseRevision: nil,
                            ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "milk"))])
        try log.waitDurable(log.lastLSN)
        let before = StoreImage(store)
        let segment = LogSegments.path(in: dir.path, firstLSN: 1)
        let sizeBefore = try #require(FileManager.default.attributesOfItem(atPath: segment)[.size] as? Int)
        try store.importLists(try Self.staging(store, ids: [7, 8, 9], items: 300), mode: .replace, namespace: .default)
        try log.close()
        let sizeAfter = try #require(FileManager.default.attributesOfItem(atPath: segment)[.size] as? Int)
        #expect(sizeAfter > sizeBefore + 3 * 300 * 10)

        // Cut the import's record at several points, past its first
        // changes (the deletion and the first list are whole by then).
        for cut in [sizeBefore + 9, sizeBefore + (sizeAfter - sizeBefore) / 2, sizeAfter - 1] {
            let copy = try ScratchDirectory()
            defer { copy.remove() }
            let bytes = try #require(FileManager.default.contents(atPath: segment))
            #expect(FileManager.default.createFile(atPath: copy.path + "/" + (segment as NSString).lastPathComponent,
                                                   contents: bytes.prefix(cut)))
            let (recovered, report) = try recoverStore(copy.path)
            #expect(report.tornTail?.offset == UInt64(sizeBefore), "cut at \(cut)")
            #expect(StoreImage(recovered) == before, "cut at \(cut)")
        }
        // Whole, it is all there.
        let (recovered, _) = try recoverStore(dir.path)
        #expect(StoreImage(recovered) == StoreImage(store))
        #expect(recovered.lists(in: .default).map(\.id) == [ListID(7), ListID(8), ListID(9)])
    }
}
