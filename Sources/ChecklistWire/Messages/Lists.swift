import ChecklistModel

/// LISTS (0x90): the summaries of all lists, ordered by id.
public struct Lists: WireMessage {
    public static let messageType = MessageType.lists

    public var lists: [ListSummary]

    public init(lists: [ListSummary]) { self.lists = lists }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> Lists {
        // Each summary takes at least 6 bytes, which bounds a hostile count.
        let count = try r.readCount("count", max: r.remaining / 6)
        var lists: [ListSummary] = []
        lists.reserveCapacity(count)
        for _ in 0..<count { lists.append(try ListSummary.decode(from: &r)) }
        return Lists(lists: lists)
    }

    public func encode(into w: inout WireWriter) {
        w.writeVarint(lists.count)
        for list in lists { list.encode(into: &w) }
    }
}
