import ChecklistModel

/// CREATE_LIST (0x11): a new list with a name and an icon.
public struct CreateList: WireMessage {
    public static let messageType = MessageType.createList

    public var name: String
    public var icon: String

    public init(name: String, icon: String) {
        self.name = name
        self.icon = icon
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> CreateList {
        CreateList(name: try r.readString("name"), icon: try r.readString("icon"))
    }

    public func encode(into w: inout WireWriter) {
        w.writeString(name)
        w.writeString(icon)
    }
}
