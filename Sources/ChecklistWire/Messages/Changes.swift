import ChecklistModel

/// CHANGES (0xB2): the answer to CHANGES_SINCE: the list's current revision
/// and the changes after the asked revision, oldest first.
public struct Changes: WireMessage {
    public static let messageType = MessageType.changes

    public var list: ListID
    /// The list's revision now. When the last change has it (or there is
    /// none and the client asked from it), the client is caught up.
    public var revision: Revision
    public var changes: [ListChange]

    public init(list: ListID, revision: Revision, changes: [ListChange]) {
        self.list = list
        self.revision = revision
        self.changes = changes
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> Changes {
        let list = ListID(try r.readVarint("list"))
        let revision = try r.readVarint("revision")
        let count = try r.readCount("count", max: r.remaining / ListChange.minimumBytes)
        var changes: [ListChange] = []
        changes.reserveCapacity(count)
        for _ in 0..<count { changes.append(try ListChange.decode(from: &r)) }
        return Changes(list: list, revision: revision, changes: changes)
    }

    public func encode(into w: inout WireWriter) {
        Self.encodeHeader(list: list, revision: revision, count: changes.count, into: &w)
        for change in changes { change.encode(into: &w) }
    }

    /// Room kept for the fields before the changes (three varints).
    public static let maxHeaderBytes = 32

    /// The most bytes of **ListChange**s one CHANGES frame of at most
    /// `maxFrameBytes` carries.
    public static func maxChangesBytes(maxFrameBytes: UInt32) -> Int {
        FrameHeader.maxBodyBytes(maxFrameBytes: maxFrameBytes) - maxHeaderBytes
    }

    /// The fields before the changes; a server copies each change's
    /// already-encoded **ListChange** after it.
    public static func encodeHeader(list: ListID, revision: Revision, count: Int, into w: inout WireWriter) {
        w.writeVarint(list.rawValue)
        w.writeVarint(revision)
        w.writeVarint(count)
    }
}
