import ChecklistModel

/// Where a page starts.
public enum PageStart: Hashable, Sendable {
    /// At this index among the rows matching the page's filter.
    case offset(UInt64)
    /// At this item's current position: its index among the matching rows,
    /// or, if it does not match the filter, the index of the first matching
    /// row after it. The item must be in the list.
    case anchor(ItemID)
}

/// What a page request resolved to, before any row is read.
public struct PageHeader: Hashable, Sendable {
    /// The list, as of this page.
    public var summary: ListSummary
    /// Number of rows matching the filter.
    public var total: UInt64
    /// Index (among matching rows) of the first row of the page. For an
    /// offset past the end this is the offset asked for.
    public var offset: UInt64
    /// Number of rows the page holds: `min(limit, total - offset)`, or 0.
    public var count: Int

    public init(summary: ListSummary, total: UInt64, offset: UInt64, count: Int) {
        self.summary = summary
        self.total = total
        self.offset = offset
        self.count = count
    }
}

/// A page of rows, copied out of the store.
public struct Page: Hashable, Sendable {
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
