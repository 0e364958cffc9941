import ChecklistModel
import ChecklistPersistence
import ChecklistSnapshot
import ChecklistStore
import Foundation

/// Everything a store holds, by value, for comparing two stores.
struct StoreImage: Equatable, CustomStringConvertible {
    var lists: [ExportedList: [Item]] = [:]
    var nextListID = ListID(0)

    /// Short, for failure messages: ids, revisions and item counts.
    var description: String {
        let summaries = lists.map { "\($0.key.summary.id)@r\($0.key.summary.revision):\($0.value.count)" }.sorted()
        return "lists [\(summaries.joined(separator: ", "))], next list id \(nextListID)"
    }

    init(_ store: Store) {
        nextListID = store.exportLists(in: nil) { list, forEachRow in
            var items: [Item] = []
            forEachRow { items.append($0.item) }
            lists[list] = items
        }
    }
}

/// A fresh directory under /tmp, removed by `remove()`.
struct ScratchDirectory {
    let path = NSTemporaryDirectory() + "checklist-durability-\(UUID().uuidString)"

    init() throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Recovers the log of `path` (no snapshot) into a new store, applying
/// `ReplayRule` like the server does.
func recoverStore(_ path: String) throws -> (Store, RecoveryReport) {
    let store = Store()
    let directory = try DataDirectory(path: path)
    defer { directory.close() }
    let report = try Recovery.run(directory: directory, sink: NoSnapshot()) { change in
        let current = try? store.summary(in: change.namespace, list: change.list).revision
        if try ReplayRule.decide(change, currentRevision: current) == .apply { try store.replay(change) }
    }
    return (store, report)
}

/// A sink for directories that hold no snapshot.
struct NoSnapshot: SnapshotRestoreSink {
    struct Unexpected: Error {}
    func restoreHeader(_ header: SnapshotHeader) throws { throw Unexpected() }
    func restoreList(_ list: SnapshotList) throws { throw Unexpected() }
    func restoreItem(_ item: Item, in list: ListID) throws { throw Unexpected() }
}
