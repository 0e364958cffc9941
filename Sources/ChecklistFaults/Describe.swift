import ChecklistModel
import ChecklistWire

/// Short forms of operations and changes for violations' details and the
/// history dump: `insert#172@144"w6.536.0"`, `toggle#12`, `move#9→4`.
enum Describe {
    static func ref(_ ref: ItemRef) -> String {
        switch ref {
        case .id(let id): return "#\(id)"
        case .temp(let t): return "~\(t)"
        }
    }

    static func sent(_ op: PatchOperation) -> String {
        switch op {
        case let .insert(tempRef, position, fields):
            let at: String
            switch position {
            case .end: at = "end"
            case .index(let i): at = "\(i)"
            case .after(let r): at = "after\(ref(r))"
            }
            return "insert~\(tempRef ?? 0)@\(at)\"\(fields.text)\""
        case let .setText(r, text): return "setText\(ref(r))\"\(text)\""
        case let .setChecked(r, value): return "setChecked\(ref(r))=\(value)"
        case let .toggle(r): return "toggle\(ref(r))"
        case let .setDue(r, _): return "setDue\(ref(r))"
        case let .setRemind(r, _): return "setRemind\(ref(r))"
        case let .setPrice(r, _): return "setPrice\(ref(r))"
        case let .setKey(r, _): return "setKey\(ref(r))"
        case let .delete(r): return "delete\(ref(r))"
        case let .move(r, to): return "move\(ref(r))→\(to)"
        }
    }

    static func sent(_ ops: [PatchOperation]) -> String { "[" + ops.map(sent).joined(separator: " ") + "]" }

    static func applied(_ op: AppliedOperation) -> String {
        switch op {
        case let .insert(id, index, fields): return "insert#\(id)@\(index)\"\(fields.text)\""
        case let .setText(id, text): return "setText#\(id)\"\(text)\""
        case let .setChecked(id, value): return "setChecked#\(id)=\(value)"
        case let .setDue(id, _): return "setDue#\(id)"
        case let .setRemind(id, _): return "setRemind#\(id)"
        case let .setPrice(id, _): return "setPrice#\(id)"
        case let .setKey(id, _): return "setKey#\(id)"
        case let .delete(id): return "delete#\(id)"
        case let .move(id, to): return "move#\(id)→\(to)"
        }
    }

    static func change(_ change: ListChange) -> String {
        let what: String
        switch change.kind {
        case .listCreated: what = "created"
        case .listUpdated: what = "updated"
        case .listDeleted: what = "deleted"
        case .omitted: what = "omitted"
        case .patched(let ops): what = "[" + ops.map(applied).joined(separator: " ") + "]"
        }
        return "r\(change.revision) \(what)"
    }
}
