import ChecklistModel
import ChecklistWire

/// One page of a list's rows as the server sent it (GET_PAGE), for a table view.
public struct FetchedPage: Hashable, Sendable {
    /// The list the rows belong to.
    public var list: ListID
    /// The list's revision the rows were read at.
    public var revision: Revision
    /// The filter the rows were counted with.
    public var filter: RowFilter
    /// The number of rows that match the filter (the table's row count).
    public var total: UInt64
    /// The filtered index of `items[0]`; `items[i]` is row `offset + i`.
    public var offset: UInt64
    /// The rows, at most the `limit` asked for.
    public var items: [Item]

    /// Creates a page; `items[i]` is the row at filtered index `offset + i`.
    public init(list: ListID, revision: Revision, filter: RowFilter, total: UInt64, offset: UInt64, items: [Item]) {
        self.list = list
        self.revision = revision
        self.filter = filter
        self.total = total
        self.offset = offset
        self.items = items
    }

    /// Builds a page from the wire message.
    public init(_ message: PageMessage, filter: RowFilter) {
        self.init(list: message.header.list, revision: message.header.revision, filter: filter,
                  total: message.header.total, offset: message.header.offset, items: message.rows)
    }

    /// The filtered index just after the last row of this page.
    public var endOffset: UInt64 { offset + UInt64(items.count) }

    /// True when rows after this page match the filter.
    public var hasMore: Bool { endOffset < total }
}
