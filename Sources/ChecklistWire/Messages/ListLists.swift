import ChecklistModel

/// LIST_LISTS (0x10): asks for the summaries of all lists. Empty body.
public struct ListLists: WireMessage {
    public static let messageType = MessageType.listLists

    public init() {}

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> ListLists { ListLists() }

    public func encode(into w: inout WireWriter) {}
}
