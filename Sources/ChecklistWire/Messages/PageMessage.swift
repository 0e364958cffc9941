import ChecklistModel

/// PAGE (0xA0): a page of rows and the counts a table view needs.
public struct PageMessage: WireMessage {
    public static let messageType = MessageType.page

    /// The fields before the rows.
    public var header: PageHeader
    public var rows: [Item]

    public init(list: ListID, revision: Revision, total: UInt64, offset: UInt64, rows: [Item]) {
        self.header = PageHeader(list: list, revision: revision, total: total, offset: offset, count: rows.count)
        self.rows = rows
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> PageMessage {
        let header = try PageHeader.decode(from: &r)
        var rows: [Item] = []
        rows.reserveCapacity(header.count)
        for _ in 0..<header.count {
            rows.append(try PageRow.read(from: &r).item())
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
