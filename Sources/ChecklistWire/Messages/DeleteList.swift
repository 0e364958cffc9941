import ChecklistModel

/// DELETE_LIST (0x13): delete a list and all its items.
public struct DeleteList: WireMessage {
    public static let messageType = MessageType.deleteList

    public var list: ListID

    public init(list: ListID) { self.list = list }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> DeleteList {
        DeleteList(list: ListID(try r.readVarint("list")))
    }

    public func encode(into w: inout WireWriter) { w.writeVarint(list.rawValue) }
}
