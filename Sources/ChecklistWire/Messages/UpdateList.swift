import ChecklistModel

/// UPDATE_LIST (0x12): rename and/or re-icon a list.
public struct UpdateList: WireMessage {
    public static let messageType = MessageType.updateList
    static let hasName: UInt8 = 1 << 0
    static let hasIcon: UInt8 = 1 << 1

    public var list: ListID
    public var name: String?
    public var icon: String?

    public init(list: ListID, name: String? = nil, icon: String? = nil) {
        self.list = list
        self.name = name
        self.icon = icon
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> UpdateList {
        let list = ListID(try r.readVarint("list"))
        let presence = try r.readPresence(known: hasName | hasIcon)
        let name = presence & hasName != 0 ? try r.readString("name") : nil
        let icon = presence & hasIcon != 0 ? try r.readString("icon") : nil
        return UpdateList(list: list, name: name, icon: icon)
    }

    public func encode(into w: inout WireWriter) {
        w.writeVarint(list.rawValue)
        w.writeU8((name != nil ? Self.hasName : 0) | (icon != nil ? Self.hasIcon : 0))
        if let name { w.writeString(name) }
        if let icon { w.writeString(icon) }
    }
}
