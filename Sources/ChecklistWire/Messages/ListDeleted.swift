import ChecklistModel

/// LIST_DELETED (0x93): the list is gone; `revision` is the deletion's.
public struct ListDeleted: WireMessage {
    public static let messageType = MessageType.listDeleted

    public var list: ListID
    public var revision: Revision

    public init(list: ListID, revision: Revision) {
        self.list = list
        self.revision = revision
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> ListDeleted {
        ListDeleted(list: ListID(try r.readVarint("list")), revision: try r.readVarint("revision"))
    }

    public func encode(into w: inout WireWriter) {
        w.writeVarint(list.rawValue)
        w.writeVarint(revision)
    }
}
