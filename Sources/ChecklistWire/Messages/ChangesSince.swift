import ChecklistModel

/// CHANGES_SINCE (0x32): the changes of one list after a revision, paged.
public struct ChangesSince: WireMessage {
    public static let messageType = MessageType.changesSince

    public var list: ListID
    /// The revision the client has; the answer starts after it.
    public var revision: Revision
    /// Most changes wanted, at least 1; the server may send fewer. A limit
    /// of 0 decodes and is refused when the request is carried out
    /// (`BAD_FIELD limit`, Protocol/SPEC.md section 2), like GET_PAGE's.
    public var limit: UInt64

    public init(list: ListID, revision: Revision, limit: UInt64) {
        self.list = list
        self.revision = revision
        self.limit = limit
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> ChangesSince {
        let list = ListID(try r.readVarint("list"))
        let revision = try r.readVarint("revision")
        return ChangesSince(list: list, revision: revision, limit: try r.readVarint("limit"))
    }

    public func encode(into w: inout WireWriter) {
        w.writeVarint(list.rawValue)
        w.writeVarint(revision)
        w.writeVarint(limit)
    }
}
