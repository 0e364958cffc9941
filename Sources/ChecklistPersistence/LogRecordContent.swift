import ChecklistModel
import ChecklistSnapshot
import ChecklistWire

/// What a log record holds after its LSN and lag: the changes of one commit
/// (Protocol/SNAPSHOT.md section 7.1). Pure: no I/O.
///
/// A commit of one change (every request) is that **Change**, as it always
/// was. A commit of several (an import: its `listDeleted` and
/// `listImported` changes) is one **ChangeGroup**, so that a crash keeps all
/// of it or none: the record has one CRC, and a torn record is cut whole.
public enum LogRecordContent {
    /// The first byte of a **ChangeGroup**; a **Change** starts with its
    /// kind, 1-5.
    public static let groupMarker: UInt8 = 0x06
    /// How much an encoder with a `drain` gathers before handing it over.
    static let drainBytes = 1 << 20
    /// A group member's presence bit: its idempotency key follows it.
    static let hasKey: UInt8 = 1 << 0

    /// Appends `changes` (at least one): the single Change, or a group.
    public static func encode(_ changes: [Change], into w: inout WireWriter) {
        encode(changes, into: &w, drainAt: .max) { _ in }
    }

    /// Appends a commit of the one change `change`: what `encode([change], into:)` appends.
    public static func encode(_ change: Change, into w: inout WireWriter) {
        change.encodeFields(into: &w, drainAt: .max) { _ in }
        change.encodeKey(into: &w)
    }

    /// Appends `changes`, handing imported items over to `drain` in pieces
    /// of about `drainAt` bytes (see `Change.encodeFields`). The bytes are
    /// the same whatever the pieces.
    static func encode(_ changes: [Change], into w: inout WireWriter, drainAt: Int,
                       drain: (inout WireWriter) -> Void) {
        precondition(!changes.isEmpty, "a commit has at least one change")
        guard changes.count > 1 else {
            changes[0].encodeFields(into: &w, drainAt: drainAt, drain: drain)
            changes[0].encodeKey(into: &w)
            return
        }
        w.writeU8(groupMarker)
        w.writeVarint(changes.count)
        for change in changes {
            // Members delimit themselves: the key, which ends a lone Change
            // when bytes remain, is announced here.
            w.writeU8(change.idempotencyKey == nil ? 0 : hasKey)
            change.encodeFields(into: &w, drainAt: drainAt, drain: drain)
            change.encodeKey(into: &w)
        }
    }

    /// Decodes what `encode` wrote; throws `BAD_FIELD` naming the field on
    /// short or invalid input, never traps. Bytes after it are the caller's
    /// to refuse.
    public static func decode(from r: inout WireReader) throws(ChecklistError) -> [Change] {
        var peek = r
        guard try peek.readU8("kind") == groupMarker else { return [try Change.decode(from: &r)] }
        r = peek
        // Every member takes at least 5 bytes: presence, kind, namespace, list, revision.
        let count = try r.readCount("count", max: r.remaining / 5)
        guard count >= 2 else { throw .badField("count", "a change group holds at least 2 changes, not \(count)") }
        var changes: [Change] = []
        changes.reserveCapacity(count)
        for _ in 0..<count {
            let presence = try r.readPresence(known: hasKey)
            var change = try Change.decodeFields(from: &r)
            if presence & hasKey != 0 { change.idempotencyKey = try Change.decodeKey(from: &r) }
            changes.append(change)
        }
        return changes
    }
}
