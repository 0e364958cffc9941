import ChecklistModel
@testable import ChecklistPersistence
import ChecklistRandom
import Foundation
import Synchronization

/// A fresh directory under /tmp, removed by `remove()`.
struct TempDirectory {
    let path: String

    init(_ name: String = "persist") {
        path = NSTemporaryDirectory() + "checklist-\(name)-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }

    func files() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }
}

func readFile(_ path: String) -> [UInt8] { Array(FileManager.default.contents(atPath: path) ?? Data()) }

func writeFile(_ path: String, _ bytes: [UInt8]) { _ = FileManager.default.createFile(atPath: path, contents: Data(bytes)) }

/// One change of every kind and every operation, with edge values.
let everyKindOfChange: [Change] = [
    Change(namespace: .default, list: ListID(1), revision: 1, kind: .listCreated(name: "Groceries", icon: "Groceries")),
    Change(namespace: Namespace("tenant-ü"), list: ListID(UInt64.max), revision: UInt64.max,
           kind: .listUpdated(name: "Birthdays 🎂", icon: "")),
    Change(namespace: .default, list: ListID(1), revision: 2, kind: .patched([
        .insert(id: ItemID(1), index: 0, fields: ItemFields(text: "Milk")),
        .insert(id: ItemID(2), index: 1, fields: ItemFields(text: "Eggs", checked: true, due: -86_400, remind: true, price: 249)),
        .insert(id: ItemID(3), index: 0, fields: ItemFields(text: "", due: Int64.min, price: Int64.max)),
        .setText(ItemID(1), "Oat milk"),
        .setChecked(ItemID(1), true),
        .setChecked(ItemID(2), false),
        .setDue(ItemID(1), 1_700_000_000),
        .setDue(ItemID(1), nil),
        .setRemind(ItemID(1), true),
        .setPrice(ItemID(2), -1),
        .setPrice(ItemID(2), nil),
        .move(ItemID(3), toIndex: 2),
        .delete(ItemID(2)),
    ])),
    Change(namespace: .default, list: ListID(1), revision: 3, kind: .patched([])),
    Change(namespace: .default, list: ListID(1), revision: 4, kind: .listDeleted),
]

/// A reference store that applies `Change`s and restores snapshots: the
/// model the tests compare against.
final class FakeStore: SnapshotRestoreSink {
    struct List: Hashable {
        var namespace: Namespace
        var name: String
        var icon: String
        var revision: Revision
        var nextItemID: UInt64
        var items: [Item]
    }

    var lists: [ListID: List] = [:]
    var nextListID: UInt64 = 1
    var replayed: [Change] = []
    var skipped: [Change] = []
    /// IDEMPOTENCY records restored, in order.
    var keys: [SnapshotIdempotency] = []

    func restoreHeader(_ header: SnapshotHeader) throws { nextListID = header.nextListID.rawValue }

    func restoreIdempotency(_ client: SnapshotIdempotency) throws { keys.append(client) }

    func restoreList(_ list: SnapshotList) throws {
        lists[list.id] = List(namespace: list.namespace, name: list.name, icon: list.icon, revision: list.revision,
                              nextItemID: list.nextItemID.rawValue, items: [])
        nextListID = max(nextListID, list.id.rawValue + 1)
    }

    func restoreItem(_ item: Item, in list: ListID) throws { lists[list]!.items.append(item) }

    /// Applies `change` as the store's apply path would have.
    func apply(_ change: Change) {
        switch change.kind {
        case let .listCreated(name, icon):
            lists[change.list] = List(namespace: change.namespace, name: name, icon: icon, revision: change.revision, nextItemID: 1, items: [])
            nextListID = max(nextListID, change.list.rawValue + 1)
            return
        case .listDeleted:
            lists[change.list] = nil
            return
        case let .listImported(imported):
            lists[change.list] = List(namespace: change.namespace, name: imported.name, icon: imported.icon, revision: change.revision,
                                      nextItemID: imported.nextItemID.rawValue, items: imported.items.array)
            nextListID = max(nextListID, change.list.rawValue + 1)
            return
        case let .listUpdated(name, icon):
            lists[change.list]!.name = name
            lists[change.list]!.icon = icon
        case let .patched(ops):
            var list = lists[change.list]!
            for op in ops {
                func at(_ id: ItemID) -> Int { list.items.firstIndex { $0.id == id }! }
                switch op {
                case let .insert(id, index, fields):
                    list.items.insert(Item(id: id, fields: fields), at: Int(index))
                    list.nextItemID = max(list.nextItemID, id.rawValue + 1)
                case let .setText(id, text): list.items[at(id)].fields.text = text
                case let .setChecked(id, checked): list.items[at(id)].fields.checked = checked
                case let .setDue(id, due): list.items[at(id)].fields.due = due
                case let .setRemind(id, remind): list.items[at(id)].fields.remind = remind
                case let .setPrice(id, price): list.items[at(id)].fields.price = price
                case let .delete(id): list.items.remove(at: at(id))
                case let .move(id, toIndex):
                    let item = list.items.remove(at: at(id))
                    list.items.insert(item, at: Int(toIndex))
                }
            }
            lists[change.list] = list
        }
        lists[change.list]!.revision = change.revision
    }

    /// The replay sink a server would use: `ReplayRule`, then apply.
    func replay(_ change: Change) throws {
        switch try ReplayRule.decide(change, currentRevision: lists[change.list]?.revision) {
        case .apply: apply(change); replayed.append(change)
        case .skip: skipped.append(change)
        }
    }

    /// Writes every list, in id order, to `writer`.
    func write(to writer: SnapshotWriter) throws {
        for id in lists.keys.sorted() { try write(list: id, to: writer) }
    }

    func write(list id: ListID, to writer: SnapshotWriter) throws {
        guard let list = lists[id] else { return }
        try writer.writeList(SnapshotList(namespace: list.namespace, id: id, name: list.name, icon: list.icon,
                                          revision: list.revision, nextItemID: ItemID(list.nextItemID),
                                          itemCount: UInt64(list.items.count)))
        for item in list.items { try writer.writeItem(item) }
    }

    var itemCount: Int { lists.values.reduce(0) { $0 + $1.items.count } }
}

/// Generates a plausible history of changes over a few lists, applying each
/// to `store` as it goes.
func randomHistory(count: Int, lists listCount: Int = 3, seed: UInt64 = 7, store: FakeStore) -> [Change] {
    var rng = SplitMix64(seed: seed)
    let words = ["Walk the dog", "Brush my teeth", "Learn iOS development", "Soccer practice", "Eat ice cream", "Milk", "Eggs"]
    var changes: [Change] = []
    func emit(_ change: Change) { store.apply(change); changes.append(change) }
    while changes.count < count {
        let live = store.lists.keys.sorted()
        if live.count < listCount || rng.next() % 50 == 0 {
            let id = ListID(store.nextListID)
            emit(Change(namespace: .default, list: id, revision: 1, kind: .listCreated(name: "List \(id)", icon: "Folder")))
            continue
        }
        let id = live[Int(rng.next() % UInt64(live.count))]
        let list = store.lists[id]!
        let revision = list.revision + 1
        switch rng.next() % 20 {
        case 0 where live.count > 1:
            emit(Change(namespace: .default, list: id, revision: revision, kind: .listDeleted))
        case 1:
            emit(Change(namespace: .default, list: id, revision: revision, kind: .listUpdated(name: "Renamed \(revision)", icon: "Chores")))
        default:
            var ops: [AppliedOperation] = []
            var count = list.items.count
            var nextID = list.nextItemID
            for _ in 0..<(1 + Int(rng.next() % 3)) {
                if count == 0 || rng.next() % 3 == 0 {
                    let text = words[Int(rng.next() % UInt64(words.count))]
                    ops.append(.insert(id: ItemID(nextID), index: rng.next() % UInt64(count + 1),
                                       fields: ItemFields(text: text, checked: rng.next() % 2 == 0,
                                                          due: rng.next() % 4 == 0 ? Int64(rng.next() % 2_000_000_000) : nil,
                                                          price: rng.next() % 4 == 0 ? Int64(rng.next() % 10_000) : nil)))
                    nextID += 1
                    count += 1
                } else {
                    // Operate on an item that exists before this batch.
                    guard !list.items.isEmpty else { continue }
                    let target = list.items[Int(rng.next() % UInt64(list.items.count))].id
                    if ops.contains(where: { if case .delete(let d) = $0 { return d == target } else { return false } }) { continue }
                    switch rng.next() % 5 {
                    case 0: ops.append(.setChecked(target, rng.next() % 2 == 0))
                    case 1: ops.append(.setText(target, "Edited \(rng.next() % 100)"))
                    case 2: ops.append(.move(target, toIndex: rng.next() % UInt64(count)))
                    case 3: ops.append(.delete(target)); count -= 1
                    default: ops.append(.setPrice(target, rng.next() % 2 == 0 ? nil : 99))
                    }
                }
            }
            emit(Change(namespace: .default, list: id, revision: revision, kind: .patched(ops)))
        }
    }
    return changes
}

/// Counts calls, thread-safely.
final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func increment() { value.add(1, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}

/// A value shared between threads.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<T>(_ body: (inout Value) -> T) -> T { mutex.withLock { body(&$0) } }
    var value: Value { mutex.withLock { $0 } }
}

/// Recovers `dir` into a fresh FakeStore, returning the replayed changes.
func recover(_ dir: TempDirectory) throws -> (changes: [Change], report: RecoveryReport) {
    let data = try DataDirectory(path: dir.path)
    defer { data.close() }
    var changes: [Change] = []
    let report = try Recovery.run(directory: data, sink: FakeStore()) { changes.append($0) }
    return (changes, report)
}

/// Reads the whole snapshot file at `path`; returns the error.
func readSnapshotError(atPath path: String, limits: SnapshotLimits = .default) -> PersistenceError? {
    do {
        let reader = try SnapshotReader(path: path, limits: limits)
        while try reader.next() != nil {}
        return nil
    } catch {
        return error
    }
}
