import ChecklistModel
import ChecklistSnapshot
import ChecklistRandom
import Foundation

/// A fresh directory under /tmp, removed by `remove()`.
package struct TempDirectory {
    package let path: String

    package init(_ name: String = "persist") {
        path = NSTemporaryDirectory() + "checklist-\(name)-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    package func remove() { try? FileManager.default.removeItem(atPath: path) }

    package func file(_ name: String) -> String { path + "/" + name }

    package func files() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }
}

package func readFile(_ path: String) -> [UInt8] { Array(FileManager.default.contents(atPath: path) ?? Data()) }

package func writeFile(_ path: String, _ bytes: [UInt8]) { _ = FileManager.default.createFile(atPath: path, contents: Data(bytes)) }

/// One change of every kind and every operation, with edge values.
package let everyKindOfChange: [Change] = [
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
package final class FakeStore: SnapshotRestoreSink {
    package init() {}

    package struct List: Hashable {
        package var namespace: Namespace
        package var name: String
        package var icon: String
        package var revision: Revision
        package var nextItemID: UInt64
        package var items: [Item]
    }

    package var lists: [ListID: List] = [:]
    package var nextListID: UInt64 = 1
    package var replayed: [Change] = []
    package var skipped: [Change] = []
    /// IDEMPOTENCY records restored, in order.
    package var keys: [SnapshotIdempotency] = []

    package func restoreHeader(_ header: SnapshotHeader) throws { nextListID = header.nextListID.rawValue }

    package func restoreIdempotency(_ client: SnapshotIdempotency) throws { keys.append(client) }

    package func restoreList(_ list: SnapshotList) throws {
        lists[list.id] = List(namespace: list.namespace, name: list.name, icon: list.icon, revision: list.revision,
                              nextItemID: list.nextItemID.rawValue, items: [])
        nextListID = max(nextListID, list.id.rawValue + 1)
    }

    package func restoreItem(_ item: Item, in list: ListID) throws { lists[list]!.items.append(item) }

    /// Applies `change` as the store's apply path would have.
    package func apply(_ change: Change) {
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
                case let .setKey(id, key): list.items[at(id)].fields.clientKey = key
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

    /// Writes every list, in id order, to `writer`.
    package func write(to writer: SnapshotWriter) throws {
        for id in lists.keys.sorted() { try write(list: id, to: writer) }
    }

    package func write(list id: ListID, to writer: SnapshotWriter) throws {
        guard let list = lists[id] else { return }
        try writer.writeList(SnapshotList(namespace: list.namespace, id: id, name: list.name, icon: list.icon,
                                          revision: list.revision, nextItemID: ItemID(list.nextItemID),
                                          itemCount: UInt64(list.items.count)))
        for item in list.items { try writer.writeItem(item) }
    }

    package var itemCount: Int { lists.values.reduce(0) { $0 + $1.items.count } }
}

/// Generates a plausible history of changes over a few lists, applying each
/// to `store` as it goes.
package func randomHistory(count: Int, lists listCount: Int = 3, seed: UInt64 = 7, store: FakeStore) -> [Change] {
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

/// Sample content for snapshot tests: a header, a store, idempotency keys.
package enum SnapshotSamples {
    package static func header(for store: FakeStore, startLSN: LSN = 42) -> SnapshotHeader {
        SnapshotHeader(createdAt: 1_700_000_000, source: "tests", listCount: UInt64(store.lists.count),
                       itemCount: UInt64(store.itemCount), startLSN: startLSN, nextListID: ListID(store.nextListID))
    }

    /// A store with several lists, edge-case items and a few thousand rows.
    package static func store(items: Int = 3000) -> FakeStore {
        let store = FakeStore()
        _ = randomHistory(count: 400, lists: 4, store: store)
        store.apply(Change(namespace: Namespace("other"), list: ListID(store.nextListID), revision: 1,
                           kind: .listCreated(name: "Empty", icon: "")))
        let big = ListID(store.nextListID)
        store.apply(Change(namespace: .default, list: big, revision: 1, kind: .listCreated(name: "Big", icon: "Trips")))
        var ops: [AppliedOperation] = [
            .insert(id: ItemID(1), index: 0, fields: ItemFields(text: String(repeating: "long text ", count: 300), due: Int64.min, price: Int64.max)),
            .insert(id: ItemID(2), index: 1, fields: ItemFields(text: "Ünïcödé ✓ 🎉", checked: true, due: -1, remind: true, price: 0)),
        ]
        for i in 3...UInt64(items) { ops.append(.insert(id: ItemID(i), index: i - 1, fields: ItemFields(text: "Item \(i)", checked: i % 3 == 0))) }
        store.apply(Change(namespace: .default, list: big, revision: 2, kind: .patched(ops)))
        return store
    }

    package static func answer(_ sequence: UInt64, list: UInt64 = 1, revision: UInt64? = nil, inserted: [ItemIDRun] = []) -> SnapshotIdempotency.Answer {
        SnapshotIdempotency.Answer(sequence: sequence, list: ListID(list), revision: revision ?? sequence + 1, inserted: inserted)
    }

    /// A few clients, one with only a floor, one with a multi-run answer.
    package static let clients: [SnapshotIdempotency] = [
        SnapshotIdempotency(namespace: Namespace("family"), client: 0x1234, floor: 3, answers: []),
        SnapshotIdempotency(namespace: .default, client: 7, floor: 0, answers: [
            answer(1, inserted: [ItemIDRun(first: ItemID(1), count: 1000)]),
            answer(2),
            answer(9, list: 2, inserted: [ItemIDRun(first: ItemID(9), count: 2), ItemIDRun(first: ItemID(3), count: 1)]),
        ]),
        SnapshotIdempotency(namespace: Namespace("tenant-ü"), client: UInt64.max, floor: UInt64.max - 1,
                            answers: [answer(UInt64.max, list: UInt64.max, revision: UInt64.max,
                                             inserted: [ItemIDRun(first: ItemID(UInt64.max), count: 1)])]),
    ]
}

/// More random history on top of `store`'s current state (without applying it).
package func continueHistory(of store: FakeStore, count: Int, seed: UInt64) -> [Change] {
    let scratch = FakeStore()
    scratch.lists = store.lists
    scratch.nextListID = store.nextListID
    return randomHistory(count: count, lists: 5, seed: seed, store: scratch)
}

/// Where the golden vectors of Protocol/vectors/snapshot live, and their hex.
package enum VectorFiles {
    package static let directory: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path + "/Protocol/vectors/snapshot"
    }()

    package static var writing: Bool { ProcessInfo.processInfo.environment["CHECKLIST_WRITE_VECTORS"] == "1" }

    package static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
    package static func unhex(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        var i = s.startIndex
        while i < s.endIndex {
            let j = s.index(i, offsetBy: 2)
            out.append(UInt8(s[i..<j], radix: 16)!)
            i = j
        }
        return out
    }
}

/// Runs a tool, returning its exit status and standard output.
package func run(_ tool: String, _ arguments: [String], input: [UInt8]? = nil) throws -> (status: Int32, output: [UInt8]) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle.nullDevice
    let inPipe = Pipe()
    if input != nil { process.standardInput = inPipe }
    try process.run()
    if let input {
        // Feed on another thread so a full output pipe cannot deadlock us.
        let handle = inPipe.fileHandleForWriting
        let data = Data(input)
        Thread.detachNewThread {
            handle.write(data)
            try? handle.close()
        }
    }
    let output = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, Array(output))
}

/// Reads the whole snapshot file at `path`; returns the error.
package func readSnapshotError(atPath path: String, limits: SnapshotLimits = .default) -> SnapshotError? {
    do {
        let reader = try SnapshotReader(path: path, limits: limits)
        while try reader.next() != nil {}
        return nil
    } catch {
        return error
    }
}
