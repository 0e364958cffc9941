/// What a page request resolved to, before its rows: the fields of a PAGE
/// that precede the rows, as the store resolves them and the wire carries
/// them.
public struct PageHeader: Hashable, Sendable {
    /// The list the page is of.
    public var list: ListID
    /// The list's revision the rows were read at.
    public var revision: Revision
    /// Number of rows matching the filter.
    public var total: UInt64
    /// Index (among matching rows) of the first row of the page. For an
    /// offset past the end this is the offset asked for.
    public var offset: UInt64
    /// Number of rows the page holds.
    public var count: Int

    public init(list: ListID, revision: Revision, total: UInt64, offset: UInt64, count: Int) {
        self.list = list
        self.revision = revision
        self.total = total
        self.offset = offset
        self.count = count
    }
}
