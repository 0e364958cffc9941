import ChecklistModel
import ChecklistStore
import ChecklistPersistence
import ChecklistSnapshot
import ChecklistPostgres
import ChecklistTesting
import Glibc
import Synchronization
import Testing

/// The one private cluster of this test run: started on first use, stopped
/// when the test process exits. Each test gets a database of its own.
enum TestCluster {
    /// Whether this machine has PostgreSQL binaries. Suites are disabled
    /// (reported as skipped, with the reason) when it has none.
    static let binariesFound = PostgresCluster.binariesFound

    static let skipReason: Comment = "no PostgreSQL binaries on this machine (Debian package postgresql): PostgreSQL tests skipped"

    /// The cluster (started on first use).
    static func cluster() throws -> PostgresCluster { try PostgresCluster.shared() }

    /// A fresh database's connection string.
    static func freshDatabase() throws -> String { try PostgresCluster.freshSharedDatabase() }

    /// A store on a fresh, migrated database.
    static func freshStore() throws -> (store: PostgresStore, conninfo: String) {
        let conninfo = try freshDatabase()
        return (try PostgresStore(conninfo: conninfo), conninfo)
    }
}

/// Collects what a load hands over: lists with their items, and replayed changes.
final class CollectingSink: SnapshotRestoreSink {
    var lists: [SnapshotList] = []
    var items: [ListID: [Item]] = [:]
    var nextListID = ListID(0)

    func restoreHeader(_ header: SnapshotHeader) throws { nextListID = max(nextListID, header.nextListID) }
    func restoreList(_ list: SnapshotList) throws { lists.append(list); items[list.id] = [] }
    func restoreItem(_ item: Item, in list: ListID) throws { items[list, default: []].append(item) }
}

/// Commits and lists as the tests make them.
enum Fixture {
    static func record(_ id: UInt64, name: String = "Groceries", icon: String = "Groceries", revision: Revision,
                       items: UInt64 = 0, unchecked: UInt64 = 0, nextItemID: UInt64 = 1,
                       namespace: Namespace = .default) -> ExportedList {
        ExportedList(namespace: namespace,
                   summary: ListSummary(id: ListID(id), name: name, icon: icon, itemCount: items,
                                        uncheckedCount: unchecked, revision: revision),
                   nextItemID: ItemID(nextItemID))
    }

    /// A commit creating list `id` at revision 1.
    static func create(_ id: UInt64, name: String = "Groceries", icon: String = "Groceries",
                       namespace: Namespace = .default) -> ListCommit {
        ListCommit(namespace: namespace, list: ListID(id), priorRevision: 0,
                   changes: [Change(namespace: namespace, list: ListID(id), revision: 1, kind: .listCreated(name: name, icon: icon))],
                   after: record(id, name: name, icon: icon, revision: 1, namespace: namespace))
    }

    /// A commit renaming list `id` from revision `base` to `base + 1`.
    static func rename(_ id: UInt64, from base: Revision, to name: String, answer: RememberedAnswer? = nil) -> ListCommit {
        ListCommit(namespace: .default, list: ListID(id), priorRevision: base,
                   changes: [Change(namespace: .default, list: ListID(id), revision: base + 1,
                                    kind: .listUpdated(name: name, icon: "Inbox"))],
                   after: record(id, name: name, icon: "Inbox", revision: base + 1), answer: answer)
    }

    /// A commit deleting list `id` at revision `base`.
    static func delete(_ id: UInt64, from base: Revision) -> ListCommit {
        ListCommit(namespace: .default, list: ListID(id), priorRevision: base,
                   changes: [Change(namespace: .default, list: ListID(id), revision: base + 1, kind: .listDeleted)],
                   after: nil)
    }

    /// The text of item `i` of a generated list: varied, so it compresses
    /// about as real text does.
    static func text(_ i: UInt64) -> String {
        "Item \(i): buy \(i &* 2_654_435_761 % 1_000_003) of \(String(i &* 40_503 % 65_521, radix: 36))"
    }

    /// A checkpoint of list `id` with `count` generated items.
    static func checkpoint(_ id: UInt64, revision: Revision, count: UInt64, name: String = "Big") throws -> ListCheckpointBuilder {
        let list = SnapshotList(namespace: .default, id: ListID(id), name: name, icon: "Inbox", revision: revision,
                                nextItemID: ItemID(count + 1), itemCount: count)
        let builder = try ListCheckpointBuilder(list: list)
        for i in 1...max(count, 1) where count > 0 {
            try builder.append(Item(id: ItemID(i), fields: ItemFields(text: text(i), checked: i % 3 == 0)))
        }
        return builder
    }
}
