import ChecklistModel

/// PAGE (0xA0): a page of rows and the counts a table view needs.
public struct PageMessage: WireMessage {
    public static let messageType = MessageType.page

    /// The fields before the rows.
    public struct Header: Hashable, Sendable {
        public var list: ListID
        public var revision: Revision
        /// Rows that match the filter.
        public var total: UInt64
        /// Filtered index of the first row returned.
        public var offset: UInt64
        /// Rows that follow.
        public var count: Int

        public init(list: ListID, revision: Revision, total: UInt64, offset: UInt64, count: Int) {
            self.list = list
            self.revision = revision
            self.total = total
            self.offset = offset
            self.count = count
        }

        public static func decode(from r: inout WireReader) throws(ChecklistError) -> Header {
            let list = ListID(try r.readVarint("list"))
            let revision = try r.readVarint("revision")
            let total = try r.readVarint("total")
            let offset = try r.readVarint("offset")
            // A row takes at least 3 bytes (id, flags, text length).
            let count = try r.readCount("count", max: r.remaining / 3)
            return Header(list: list, revision: revision, total: total, offset: offset, count: count)
        }

        public func encode(into w: inout WireWriter) {
            w.writeVarint(list.rawValue)
            w.writeVarint(revision)
            w.writeVarint(total)
            w.writeVarint(offset)
            w.writeVarint(count)
        }
    }

    public var header: Header
    public var rows: [Item]

    public init(list: ListID, revision: Revision, total: UInt64, offset: UInt64, rows: [Item]) {
        self.header = Header(list: list, revision: revision, total: total, offset: offset, count: rows.count)
        self.rows = rows
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> PageMessage {
        let header = try Header.decode(from: &r)
        var rows: [Item] = []
        rows.reserveCapacity(header.count)
        for _ in 0..<header.count {
            let id = ItemID(try r.readVarint("id"))
            rows.append(Item(id: id, fields: try ItemFields.decode(from: &r)))
        }
        return PageMessage(list: header.list, revision: header.revision, total: header.total,
                           offset: header.offset, rows: rows)
    }

    public func encode(into w: inout WireWriter) {
        header.encode(into: &w)
        for row in rows {
            w.writeVarint(row.id.rawValue)
            row.fields.encode(into: &w)
        }
    }
}
