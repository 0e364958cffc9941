import ChecklistModel
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

    /// Appends `changes` (at least one): the single Change, or a group.
    public static func encode(_ changes: [Change], into w: inout WireWriter) {
        precondition(!changes.isEmpty, "a commit has at least one change")
        guard changes.count > 1 else { return changes[0].encode(into: &w) }
        w.writeU8(groupMarker)
        w.writeVarint(changes.count)
        for change in changes {
            // A fixed-width length, filled in once the change is written:
            // no second copy of a 10M-item list to learn its size first.
            let at = w.count
            w.writeU32BE(0)
            change.encode(into: &w)
            w.writeU32BE(UInt32(w.count - at - 4), at: at)
        }
    }

    /// Decodes what `encode` wrote; throws `BAD_FIELD` naming the field on
    /// short or invalid input, never traps. Bytes after it are the caller's
    /// to refuse.
    public static func decode(from r: inout WireReader) throws(ChecklistError) -> [Change] {
        var peek = r
        guard try peek.readU8("kind") == groupMarker else { return [try Change.decode(from: &r)] }
        r = peek
        // Every member takes at least 4 bytes of length and 4 of change.
        let count = try r.readCount("count", max: r.remaining / 8)
        guard count >= 2 else { throw .badField("count", "a change group holds at least 2 changes, not \(count)") }
        var changes: [Change] = []
        changes.reserveCapacity(count)
        for _ in 0..<count {
            let length = Int(try r.readU32BE("length"))
            var member = WireReader(try r.readSlice("change", count: length))
            changes.append(try Change.decode(from: &member))
            guard member.remaining == 0 else {
                throw .badField("change", "\(member.remaining) bytes after a change of the group")
            }
        }
        return changes
    }
}
