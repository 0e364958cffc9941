import ChecklistModel

/// UNSUBSCRIBE (0x31): stops the pushes for some lists, or all of them.
public struct Unsubscribe: WireMessage {
    public static let messageType = MessageType.unsubscribe

    /// `scope` 1: every subscription of the connection (the all-lists one
    /// and every list); `scope` 0: only the lists in `lists`.
    public var everything: Bool
    public var lists: [ListID]

    public init(everything: Bool = false, lists: [ListID] = []) {
        self.everything = everything
        self.lists = lists
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> Unsubscribe {
        let scope = try r.readU8("scope")
        guard scope <= 1 else { throw .badField("scope", "scope must be 0 or 1, got \(scope)") }
        let count = try r.readCount("count", max: r.remaining)
        var lists: [ListID] = []
        lists.reserveCapacity(count)
        for _ in 0..<count { lists.append(ListID(try r.readVarint("list"))) }
        return Unsubscribe(everything: scope == 1, lists: lists)
    }

    public func encode(into w: inout WireWriter) {
        w.writeU8(everything ? 1 : 0)
        w.writeVarint(lists.count)
        for list in lists { w.writeVarint(list.rawValue) }
    }
}
