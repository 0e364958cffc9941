import ChecklistModel
import ChecklistPersistence
import ChecklistSnapshot
import ChecklistPostgres
import Testing

@Suite(.enabled(if: TestCluster.binariesFound, TestCluster.skipReason), .timeLimit(.minutes(3)))
struct LoadAndImportTests {
    /// A list large enough that its checkpoint takes several parts.
    @Test func aLargeListLoadsInOrder() throws {
        let (store, _) = try TestCluster.freshStore()
        let count: UInt64 = 150_000
        try store.importLists { try $0.add(Fixture.checkpoint(1, revision: 7, count: count)) }
        let parts = try store.connection.execute("SELECT count(*) FROM list_checkpoints WHERE list_id = 1").int64(0, 0)
        #expect(parts >= 2)
        let record = try #require(try store.list(ListID(1)))
        #expect(record.summary.itemCount == count)
        #expect(record.summary.uncheckedCount == count - count / 3)
        #expect(record.summary.revision == 7)
        let sink = CollectingSink()
        let report = try #require(try store.loadList(ListID(1), into: sink) { _ in })
        #expect(report.checkpointItems == count)
        let items = try #require(sink.items[ListID(1)])
        #expect(items.count == Int(count))
        #expect(items.map(\.id.rawValue) == Array(1...count))
        #expect(items[12_344].text == Fixture.text(12_345))
        #expect(items[12_344].checked == (12_345 % 3 == 0))
    }

    /// A checkpoint of at least 2 MiB inflated on several threads (staged in
    /// /dev/shm) hands the sink exactly what the one-stream read does.
    @Test func aBigCheckpointInflatedOnSeveralThreadsLoadsTheSameRows() throws {
        let (store, _) = try TestCluster.freshStore()
        let count: UInt64 = 400_000
        try store.importLists { try $0.add(Fixture.checkpoint(1, revision: 3, count: count)) }
        let streamed = CollectingSink()
        let one = try #require(try store.loadList(ListID(1), into: streamed, inflateThreads: 1) { _ in })
        let threaded = CollectingSink()
        let several = try #require(try store.loadList(ListID(1), into: threaded, inflateThreads: 3) { _ in })
        #expect(one.checkpointBytes >= 2 << 20, "big enough to be staged")
        #expect(several == one)
        let items = try #require(threaded.items[ListID(1)])
        #expect(items.count == Int(count))
        #expect(items == streamed.items[ListID(1)])
    }

    @Test func anImportIsAllOrNothing() throws {
        let (store, _) = try TestCluster.freshStore()
        try store.commit([Fixture.create(1, name: "Kept")])
        #expect(throws: PostgresError.self) {
            try store.importLists { transaction in
                try transaction.add(Fixture.checkpoint(1, revision: 5, count: 2, name: "Replaced"))
                try transaction.add(Fixture.checkpoint(2, revision: 1, count: 2))
                throw PostgresError(.misuse, "the snapshot ended early")
            }
        }
        #expect(try store.list(ListID(1))?.summary.name == "Kept")
        #expect(try store.list(ListID(2)) == nil)
    }

    @Test func aSnapshotImportReplacesListsAndTheirHistory() throws {
        let (store, _) = try TestCluster.freshStore()
        try store.commit([Fixture.create(4), Fixture.rename(4, from: 1, to: "Old")])
        var bytes: [UInt8] = []
        let writer = try SnapshotWriter(header: SnapshotHeader(createdAt: 0, source: "test", listCount: 2, itemCount: 3,
                                                               startLSN: 0, nextListID: ListID(20))) { chunk throws(SnapshotError) in
            bytes.append(contentsOf: chunk)
        }
        try writer.writeList(SnapshotList(namespace: .default, id: ListID(4), name: "Imported", icon: "Trips",
                                          revision: 9, nextItemID: ItemID(3), itemCount: 2))
        try writer.writeItem(Item(id: ItemID(1), fields: ItemFields(text: "Walk the dog")))
        try writer.writeItem(Item(id: ItemID(2), fields: ItemFields(text: "Eat ice cream", checked: true)))
        try writer.writeList(SnapshotList(namespace: Namespace("other"), id: ListID(5), name: "Elsewhere", icon: "",
                                          revision: 1, nextItemID: ItemID(2), itemCount: 1))
        try writer.writeItem(Item(id: ItemID(1), fields: ItemFields(text: "Soccer practice")))
        try writer.finish(endLSN: 0)

        var offset = 0
        let reader = try SnapshotReader(name: "test snapshot") { buffer throws(SnapshotError) in
            let take = min(buffer.count, bytes.count - offset)
            bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + take])) }
            offset += take
            return take
        }
        #expect(try store.importSnapshot(reader) == 2)
        #expect(try store.list(ListID(4)) == Fixture.record(4, name: "Imported", icon: "Trips", revision: 9, items: 2,
                                                             unchecked: 1, nextItemID: 3))
        #expect(try store.lists(in: Namespace("other")).map(\.summary.name) == ["Elsewhere"])
        #expect(try store.nextListID() == ListID(20))
        // The old history is gone: the feed restarts at the import.
        #expect(try store.changes(in: .default, list: ListID(4), after: 1, limit: 10) == .resyncRequired)
        #expect(try store.changes(in: .default, list: ListID(4), after: 9, limit: 10) == .changes([], complete: true))
        let sink = CollectingSink()
        var replayed = 0
        _ = try store.loadList(ListID(4), into: sink) { _ in replayed += 1 }
        #expect(sink.items[ListID(4)]?.map(\.text) == ["Walk the dog", "Eat ice cream"])
        #expect(replayed == 0)
    }
}
