import ChecklistModel
import ChecklistWire
import Testing

/// The live-sync messages beyond the generic golden-vector checks: every
/// applied opcode, change kind and subscription status has a vector, and a
/// `Change` becomes the **ListChange** the vectors describe.
@Suite("Live-sync vectors", .timeLimit(.minutes(10)))
struct LiveSyncVectorTests {
    @Test func vectorsCoverEveryChangeKindAppliedOpcodeAndStatus() throws {
        var seen = Set<String>()
        for v in try GoldenVectors.all() where !v.isMalformed {
            switch try DecodedMessage.from(v) {
            case .server(.changePush(let push)):
                record(push.change, into: &seen)
            case .server(.changes(let changes)):
                changes.changes.forEach { record($0, into: &seen) }
            case .server(.subscribed(let answer)):
                answer.entries.forEach { seen.insert("status-\($0.status)") }
            case .request(.patch(let patch)) where patch.idempotencyKey != nil:
                seen.insert(patch.baseRevision == nil ? "key" : "key-and-base")
            default:
                break
            }
        }
        let wanted: Set<String> = [
            "created", "updated", "deleted", "patched", "omitted",
            "INSERT", "INSERT-due-price", "SET_TEXT", "SET_CHECKED", "SET_DUE-present", "SET_DUE-absent",
            "SET_REMIND", "SET_PRICE-present", "SET_PRICE-absent", "DELETE", "MOVE",
            "status-live", "status-resync", "status-fetch", "status-notFound", "key", "key-and-base",
        ]
        #expect(wanted.subtracting(seen).isEmpty, "missing: \(wanted.subtracting(seen).sorted())")
    }

    private func record(_ change: ListChange, into seen: inout Set<String>) {
        switch change.kind {
        case .listCreated: seen.insert("created")
        case .listUpdated: seen.insert("updated")
        case .listDeleted: seen.insert("deleted")
        case .omitted: seen.insert("omitted")
        case .patched(let ops):
            seen.insert("patched")
            for op in ops {
                switch op {
                case .insert(_, _, let f): seen.insert(f.due != nil && f.price != nil ? "INSERT-due-price" : "INSERT")
                case .setText: seen.insert("SET_TEXT")
                case .setChecked: seen.insert("SET_CHECKED")
                case .setDue(_, let due): seen.insert(due == nil ? "SET_DUE-absent" : "SET_DUE-present")
                case .setRemind: seen.insert("SET_REMIND")
                case .setPrice(_, let price): seen.insert(price == nil ? "SET_PRICE-absent" : "SET_PRICE-present")
                case .setKey: seen.insert("SET_KEY")  // never pushed (SPEC.md 6.14): no vector has it
                case .delete: seen.insert("DELETE")
                case .move: seen.insert("MOVE")
                }
            }
        }
    }

    /// The committed `Change` of a list deletion, as a server pushes it, is
    /// byte for byte the `change-list-deleted` vector; its namespace and
    /// idempotency key do not travel.
    @Test func aChangeBecomesTheListChangeOfTheVector() throws {
        let v = try GoldenVectors.load("change-list-deleted")
        let change = Change(namespace: Namespace("someone"), list: ListID(12), revision: 3, kind: .listDeleted,
                            idempotencyKey: IdempotencyKey(client: 9, sequence: 9))
        let frame = DecodedMessage.server(.changePush(ChangePush(ListChange(change)))).encoded(requestID: 0)
        #expect(frame.hex == v.hex)
    }

    /// Every applied operation survives encode → decode, and TOGGLE is refused.
    @Test func appliedOperationsRoundTrip() throws {
        let ops: [AppliedOperation] = [
            .insert(id: ItemID(1), index: 0, fields: ItemFields(text: "a", checked: true, due: -5, remind: true, price: 7)),
            .setText(ItemID(2), "b"), .setChecked(ItemID(3), false), .setDue(ItemID(4), nil), .setDue(ItemID(4), 99),
            .setRemind(ItemID(5), true), .setPrice(ItemID(6), nil), .setPrice(ItemID(6), -1),
            .delete(ItemID(7)), .move(ItemID(8), toIndex: 1 << 40),
            .insert(id: ItemID(9), index: 2, fields: ItemFields(text: "c", clientKey: "uuid-9")),
            .setKey(ItemID(9), "k"), .setKey(ItemID(9), nil),
        ]
        let change = ListChange(list: ListID(3), revision: 1 << 33, kind: .patched(ops))
        var w = WireWriter()
        change.encode(into: &w)
        let back = try readBody(w.bytes) { r in try ListChange.decode(from: &r) }
        #expect(back == change)
        let toggle: [UInt8] = [PatchOpcode.toggle.rawValue, 2]
        let error = #expect(throws: ChecklistError.self) {
            _ = try readBody(toggle) { r in try ListChange.decodeOperation(from: &r) }
        }
        #expect(error?.code == .badField && error?.field == "opcode")
    }
}
