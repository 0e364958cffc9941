import ChecklistModel

// Reading rows: one page at a time, as a table view asks for them.
extension Store {
    /// A page of rows, copied out.
    ///
    /// - Parameters:
    ///   - start: an offset among the rows matching `filter`, or an item
    ///     whose position the page starts at (see `PageStart`).
    ///   - limit: 1 ... `limits.maxPageRows` rows.
    /// - Returns: up to `limit` matching rows, with the number of matching
    ///   rows and the index of the first one. An offset past the end is not
    ///   an error: the page is empty and `total` is still right.
    /// - Throws: `.badField("limit")` for a limit below 1,
    ///   `.limitExceeded("limit")` above the maximum, `.notFound` for a
    ///   missing list or anchor item.
    public func page(in ns: Namespace, list: ListID, start: PageStart, limit: Int, filter: RowFilter) throws(ChecklistError) -> Page {
        var page: Page?
        try visitPage(in: ns, list: list, start: start, limit: limit, filter: filter) { header, rows in
            var items: [Item] = []
            items.reserveCapacity(header.count)
            rows.forEach { items.append($0.item) }
            page = Page(summary: header.summary, total: header.total, offset: header.offset, items: items)
        }
        guard let page else { preconditionFailure("visitPage calls its body") }
        return page
    }

    /// A page of rows without copying them: the path for the wire encoder.
    ///
    /// Resolves the page like `page(in:list:start:limit:filter:)`, then calls
    /// `body` once, with the store locked, passing the page's header and a
    /// function that visits the page's rows in order. Each `RowView` lends
    /// the row's text bytes straight from the store's storage, so an encoder
    /// can copy them into its output buffer with no intermediate String.
    ///
    /// Rules for `body`: call the visiting function at most once or a few
    /// times (each call walks the page again); do not keep a `RowView` or its
    /// bytes after the visitor returns; do not call into the store (it is
    /// locked: deadlock); be quick, the whole store waits.
    ///
    /// Inlinable, so that the generic part is specialized in the caller and
    /// only the non-generic `visitPage` runs behind the call.
    ///
    /// - Throws: the errors of `page(...)` (as `ChecklistError`), or what
    ///   `body` throws.
    @inlinable
    public func withPage<R>(in ns: Namespace, list: ListID, start: PageStart, limit: Int, filter: RowFilter,
                            _ body: (PageHeader, _ forEachRow: ((RowView) -> Void) -> Void) throws -> R) throws -> R {
        var result: Result<R, any Error>?
        try visitPage(in: ns, list: list, start: start, limit: limit, filter: filter) { header, rows in
            result = Result { try body(header) { visit in rows.forEach(visit) } }
        }
        guard let result else { preconditionFailure("visitPage calls its body") }
        return try result.get()
    }

    /// Resolves a page under the lock and hands it to `body`, with the rows
    /// to visit.
    @usableFromInline
    func visitPage(in ns: Namespace, list: ListID, start: PageStart, limit: Int, filter: RowFilter,
                   _ body: (PageHeader, PageRows) -> Void) throws(ChecklistError) {
        try Validation.pageLimit(limit, limits: limits)
        try locked { state throws(ChecklistError) in
            try state.withList(list, in: ns) { list throws(ChecklistError) in
                let header = try Self.header(of: list, start: start, limit: limit, filter: filter)
                body(header, PageRows(tree: list.rows, filter: filter, offset: Int(clamping: header.offset), count: header.count))
            }
        }
    }

    /// Resolves where a page starts and how many rows it has.
    private static func header(of list: ListState, start: PageStart, limit: Int, filter: RowFilter) throws(ChecklistError) -> PageHeader {
        let total = list.rows.count(filter)
        let offset: UInt64
        switch start {
        case .offset(let o):
            offset = o
        case .anchor(let id):
            guard let position = list.rows.position(of: id) else { throw ListState.itemNotFound(id) }
            offset = UInt64(position.index(filter))
        }
        let count = offset < UInt64(total) ? min(limit, total - Int(offset)) : 0
        return PageHeader(summary: list.summary, total: UInt64(total), offset: offset, count: count)
    }
}

/// The rows of one page, as `Store.visitPage` lends them: only valid while
/// the store is locked, inside the body it is handed to.
@usableFromInline
struct PageRows {
    /// A copy of the list's tree header (its columns are shared, not copied).
    let tree: RowTree
    let filter: RowFilter
    let offset: Int
    let count: Int

    @usableFromInline
    func forEach(_ visit: (RowView) -> Void) {
        tree.forEachRow(filter: filter, from: offset, limit: count, visit)
    }
}
