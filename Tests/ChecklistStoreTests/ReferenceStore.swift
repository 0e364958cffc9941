import ChecklistModel
@testable import ChecklistStore

/// The store's rules written the plainest way: lists as arrays of items,
/// copied freely. Random tests run the same requests against this and the
/// real `Store` and expect the same answers, errors included.
struct ReferenceStore {
    struct List: Equatable {
        var id: ListID
        var namespace: Namespace
        var name: String
        var icon: String
        var revision: Revision
        var nextItemID: UInt64
        var items: [Item]

        var summary: ListSummary {
            ListSummary(id: id, name: name, icon: icon, itemCount: UInt64(items.count),
                        uncheckedCount: UInt64(items.filter { !$0.checked }.count), revision: revision)
        }
    }

    var limits: Limits
    var nextListID: UInt64 = 1
    var lists: [ListID: List] = [:]

    func list(_ ns: Namespace, _ id: ListID) throws(ChecklistError) -> List {
        guard let list = lists[id], list.namespace == ns else { throw .notFound("list \(id) not found") }
        return list
    }

    func summaries(_ ns: Namespace) -> [ListSummary] {
        lists.values.filter { $0.namespace == ns }.sorted { $0.id < $1.id }.map(\.summary)
    }

    private func checkText(_ text: String, _ field: String) throws(ChecklistError) {
        if text.utf8.count > Int(limits.maxTextBytes) {
            throw ChecklistError(.limitExceeded, "\(field) too long", field: field)
        }
    }

    /// A client key is 1 to 64 bytes (written from SPEC.md section 4, not from `ClientKey`).
    private func checkKey(_ key: String) throws(ChecklistError) {
        if key.isEmpty { throw .badField("clientKey", "empty") }
        if key.utf8.count > 64 { throw ChecklistError(.limitExceeded, "clientKey too long", field: "clientKey") }
    }

    mutating func createList(_ ns: Namespace, name: String, icon: String) throws(ChecklistError) -> ListSummary {
        if name.isEmpty { throw .badField("name", "empty") }
        try checkText(name, "name")
        try checkText(icon, "icon")
        let list = List(id: ListID(nextListID), namespace: ns, name: name, icon: icon, revision: 1, nextItemID: 1, items: [])
        nextListID += 1
        lists[list.id] = list
        return list.summary
    }

    mutating func updateList(_ ns: Namespace, _ id: ListID, name: String?, icon: String?) throws(ChecklistError) -> ListSummary {
        if let name {
            if name.isEmpty { throw .badField("name", "empty") }
            try checkText(name, "name")
        }
        if let icon { try checkText(icon, "icon") }
        var list = try list(ns, id)
        list.name = name ?? list.name
        list.icon = icon ?? list.icon
        list.revision += 1
        lists[id] = list
        return list.summary
    }

    mutating func deleteList(_ ns: Namespace, _ id: ListID) throws(ChecklistError) -> Revision {
        let list = try list(ns, id)
        lists[id] = nil
        return list.revision + 1
    }

    mutating func patch(_ ns: Namespace, _ id: ListID, base: Revision?, ops: [PatchOperation]) throws(ChecklistError) -> PatchResult {
        var list = try list(ns, id)
        if ops.isEmpty { throw .badField("ops", "empty") }
        if ops.count > Int(limits.maxBatchOps) { throw ChecklistError(.limitExceeded, "too many", field: "ops") }
        if let base, base != list.revision { throw ChecklistError(.conflict, "conflict", revision: list.revision) }

        var temps: [UInt64: ItemID] = [:]
        var applied: [AppliedOperation] = []
        var assigned: [PatchResult.Assignment] = []

        func resolve(_ ref: ItemRef) throws(ChecklistError) -> ItemID {
            switch ref {
            case .id(let id): return id
            case .temp(let t):
                guard let id = temps[t] else { throw .badField("ref", "unknown temp") }
                return id
            }
        }
        func index(_ id: ItemID) throws(ChecklistError) -> Int {
            guard let i = list.items.firstIndex(where: { $0.id == id }) else { throw .notFound("item \(id) not found") }
            return i
        }

        for op in ops {
            switch op {
            case .insert(let tempRef, let position, let fields):
                try checkText(fields.text, "text")
                if let key = fields.clientKey { try checkKey(key) }
                if let tempRef {
                    if tempRef == 0 { throw .badField("tempRef", "zero") }
                    if temps[tempRef] != nil { throw .badField("tempRef", "duplicate") }
                }
                let at: Int
                switch position {
                case .index(let i):
                    guard i <= UInt64(list.items.count) else { throw .badField("index", "past end") }
                    at = Int(i)
                case .after(let ref):
                    at = try index(try resolve(ref)) + 1
                case .end:
                    at = list.items.count
                }
                if let key = fields.clientKey, list.items.contains(where: { $0.fields.clientKey == key }) {
                    throw ChecklistError(.duplicateKey, "duplicate", field: "clientKey")
                }
                let id = ItemID(list.nextItemID)
                list.nextItemID += 1
                if let tempRef {
                    temps[tempRef] = id
                    assigned.append(.init(tempRef: tempRef, id: id))
                }
                list.items.insert(Item(id: id, fields: fields), at: at)
                applied.append(.insert(id: id, index: UInt64(at), fields: fields))
            case .setText(let ref, let text):
                try checkText(text, "text")
                let id = try resolve(ref)
                list.items[try index(id)].fields.text = text
                applied.append(.setText(id, text))
            case .setChecked(let ref, let value):
                let id = try resolve(ref)
                list.items[try index(id)].fields.checked = value
                applied.append(.setChecked(id, value))
            case .toggle(let ref):
                let id = try resolve(ref)
                let i = try index(id)
                list.items[i].fields.checked.toggle()
                applied.append(.setChecked(id, list.items[i].checked))
            case .setDue(let ref, let value):
                let id = try resolve(ref)
                list.items[try index(id)].fields.due = value
                applied.append(.setDue(id, value))
            case .setRemind(let ref, let value):
                let id = try resolve(ref)
                list.items[try index(id)].fields.remind = value
                applied.append(.setRemind(id, value))
            case .setPrice(let ref, let value):
                let id = try resolve(ref)
                list.items[try index(id)].fields.price = value
                applied.append(.setPrice(id, value))
            case .setKey(let ref, let key):
                if let key { try checkKey(key) }
                let id = try resolve(ref)
                let i = try index(id)
                if let key, list.items.contains(where: { $0.fields.clientKey == key && $0.id != id }) {
                    throw ChecklistError(.duplicateKey, "duplicate", field: "clientKey")
                }
                list.items[i].fields.clientKey = key
                applied.append(.setKey(id, key))
            case .delete(let ref):
                let id = try resolve(ref)
                list.items.remove(at: try index(id))
                applied.append(.delete(id))
            case .move(let ref, let to):
                let id = try resolve(ref)
                let from = try index(id)
                guard to < UInt64(list.items.count) else { throw .badField("toIndex", "out of range") }
                list.items.insert(list.items.remove(at: from), at: Int(to))
                applied.append(.move(id, toIndex: to))
            }
        }
        list.revision += 1
        lists[id] = list
        return PatchResult(revision: list.revision, ids: assigned, applied: applied, summary: list.summary)
    }

    func page(_ ns: Namespace, _ id: ListID, start: PageStart, limit: Int, filter: RowFilter) throws(ChecklistError) -> StorePage {
        if limit < 1 { throw .badField("limit", "too small") }
        if limit > Int(limits.maxPageRows) { throw ChecklistError(.limitExceeded, "too big", field: "limit") }
        let list = try list(ns, id)
        let matching = list.items.filter { filter.matches(checked: $0.checked) }
        let offset: UInt64
        switch start {
        case .offset(let o):
            offset = o
        case .anchor(let anchor):
            guard let i = list.items.firstIndex(where: { $0.id == anchor }) else { throw .notFound("item \(anchor) not found") }
            offset = UInt64(list.items[..<i].filter { filter.matches(checked: $0.checked) }.count)
        case .key(let key):
            guard let i = list.items.firstIndex(where: { $0.fields.clientKey == key }) else { throw .notFound("no key \(key)") }
            offset = UInt64(list.items[..<i].filter { filter.matches(checked: $0.checked) }.count)
        }
        let items = offset < UInt64(matching.count) ? Array(matching[Int(offset)..<min(Int(offset) + limit, matching.count)]) : []
        return StorePage(summary: list.summary, total: UInt64(matching.count), offset: offset, items: items)
    }
}

/// Collects the changes a store commits (the `onCommit` callback).
final class ChangeRecorder: Sendable {
    private let storage = Mutex<[Change]>([])

    var changes: [Change] { storage.withLock { $0 } }

    func record(_ change: Change) {
        storage.withLock { $0.append(change) }
    }
}

import Synchronization

/// Everything observable about a store: every list's header and rows, and
/// the list id counter.
struct StoreContents: Equatable {
    var lists: [ExportedList: [Item]] = [:]
    var nextListID: ListID = ListID(0)

    init(_ store: Store) {
        nextListID = store.exportLists(in: nil) { list, forEachRow in
            var items: [Item] = []
            forEachRow { items.append($0.item) }
            lists[list] = items
        }
    }

    init(_ reference: ReferenceStore) {
        for list in reference.lists.values {
            let exported = ExportedList(namespace: list.namespace, summary: list.summary, nextItemID: ItemID(list.nextItemID))
            lists[exported] = list.items
        }
        nextListID = ListID(reference.nextListID)
    }
}
