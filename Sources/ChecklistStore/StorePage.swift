import ChecklistModel

/// A page of rows, copied out of the store.
public struct StorePage: Hashable, Sendable {
    /// The list, as of this page.
    public var summary: ListSummary
    /// Number of rows matching the filter.
    public var total: UInt64
    /// Index (among matching rows) of `items[0]`; see `PageHeader.offset`.
    public var offset: UInt64
    public var items: [Item]

    public init(summary: ListSummary, total: UInt64, offset: UInt64, items: [Item]) {
        self.summary = summary
        self.total = total
        self.offset = offset
        self.items = items
    }
}
