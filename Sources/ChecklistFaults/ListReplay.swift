import ChecklistModel
import ChecklistWire

/// A list rebuilt from its feed: the rows after each change, applied the
/// way the server says it applied them (`AppliedOperation`). Client keys
/// are left out (they do not travel in the feed).
public struct ListReplay: Sendable {
    public private(set) var items: [Item] = []
    public private(set) var revision: Revision = 0

    public init() {}

    /// Applies one change; a description of what could not be applied, or nil.
    @discardableResult
    public mutating func apply(_ change: ListChange) -> String? {
        revision = change.revision
        var problem: String?
        for op in change.operations {
            if let p = apply(op), problem == nil { problem = p }
        }
        return problem
    }

    private func index(of id: ItemID) -> Int? { items.firstIndex { $0.id == id } }

    mutating func apply(_ op: AppliedOperation) -> String? {
        func update(_ id: ItemID, _ body: (inout ItemFields) -> Void) -> String? {
            guard let i = index(of: id) else { return "no item \(id) for \(op)" }
            body(&items[i].fields)
            return nil
        }
        switch op {
        case let .insert(id, index, fields):
            if self.index(of: id) != nil { return "item \(id) inserted twice" }
            var fields = fields
            fields.clientKey = nil
            items.insert(Item(id: id, fields: fields), at: min(Int(clamping: index), items.count))
            return nil
        case let .setText(id, text): return update(id) { $0.text = text }
        case let .setChecked(id, checked): return update(id) { $0.checked = checked }
        case let .setDue(id, due): return update(id) { $0.due = due }
        case let .setRemind(id, remind): return update(id) { $0.remind = remind }
        case let .setPrice(id, price): return update(id) { $0.price = price }
        case .setKey: return nil
        case let .delete(id):
            guard let i = index(of: id) else { return "no item \(id) to delete" }
            items.remove(at: i)
            return nil
        case let .move(id, toIndex):
            guard let i = index(of: id) else { return "no item \(id) to move" }
            let item = items.remove(at: i)
            items.insert(item, at: min(Int(clamping: toIndex), items.count))
            return nil
        }
    }

    /// Rows as a node sends them, without client keys, for comparison.
    public static func comparable(_ rows: [Item]) -> [Item] {
        rows.map { var item = $0; item.fields.clientKey = nil; return item }
    }
}

extension ListChange {
    /// The operations of a `PATCHED` change; none for the other kinds.
    public var operations: [AppliedOperation] {
        if case .patched(let ops) = kind { return ops }
        return []
    }
}
