import ChecklistModel

/// GET_PAGE (0x20): rows of a list, by filtered offset, by anchor item or
/// by an item's client key.
public struct GetPage: WireMessage {
    public static let messageType = MessageType.getPage

    public var list: ListID
    public var filter: RowFilter
    public var start: PageStart
    public var limit: UInt64

    public init(list: ListID, filter: RowFilter = .all, start: PageStart = .offset(0), limit: UInt64) {
        self.list = list
        self.filter = filter
        self.start = start
        self.limit = limit
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> GetPage {
        let list = ListID(try r.readVarint("list"))
        let rawFilter = try r.readU8("filter")
        guard let filter = RowFilter(rawValue: rawFilter) else {
            throw .badField("filter", "filter must be 0, 1 or 2, got \(rawFilter)")
        }
        let kind = try r.readU8("startKind")
        let start: PageStart
        switch kind {
        case 0: start = .offset(try r.readVarint("start"))
        case 1: start = .anchor(ItemID(try r.readVarint("start")))
        case 2: start = .key(try r.readString("start"))
        default: throw .badField("startKind", "startKind must be 0, 1 or 2, got \(kind)")
        }
        return GetPage(list: list, filter: filter, start: start, limit: try r.readVarint("limit"))
    }

    public func encode(into w: inout WireWriter) {
        w.writeVarint(list.rawValue)
        w.writeU8(filter.rawValue)
        switch start {
        case .offset(let o): w.writeU8(0); w.writeVarint(o)
        case .anchor(let id): w.writeU8(1); w.writeVarint(id.rawValue)
        case .key(let key): w.writeU8(2); w.writeString(key)
        }
        w.writeVarint(limit)
    }
}
