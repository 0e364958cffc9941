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
    ///   missing list, anchor item or client key.
    public func page(in ns: Namespace, list: ListID, start: PageStart, limit: Int, filter: RowFilter) throws(ChecklistError) -> StorePage {
        let rows = try pageRows(in: ns, list: list, start: start, limit: limit, filter: filter)
        var items: [Item] = []
        items.reserveCapacity(rows.header.count)
        rows.forEach { items.append($0.item) }
        return StorePage(summary: rows.summary, total: rows.header.total, offset: rows.header.offset, items: items)
    }

    /// A page of rows without copying them: the path for the wire encoder.
    ///
    /// Resolves the page like `page(in:list:start:limit:filter:)`. Under the
    /// store's lock it takes only the page's header and a copy-on-write
    /// share of the leaves the rows are in; the rows are read (and encoded,
    /// compressed) after the lock is released, as they were at the page's
    /// revision, whatever commits meanwhile.
    ///
    /// - Parameter committed: the revision of the list that is committed,
    ///   given the store's: asked under the store's lock, in the same
    ///   instant as the rows (its answer only moves under the lock), and
    ///   kept in `PageRows.committedRevision`.
    /// - Throws: the errors of `page(...)`.
    public func pageRows(in ns: Namespace, list: ListID, start: PageStart, limit: Int, filter: RowFilter,
                         committed: ((ListID, Revision) -> Revision)? = nil) throws(ChecklistError) -> PageRows {
        try Validation.pageLimit(limit, limits: limits)
        return try reading { state throws(ChecklistError) in
            let rewrites = state.rewrites[list] ?? 0
            return try state.readList(list, in: ns) { list throws(ChecklistError) in
                try list.requireRows()
                let header = try Self.header(of: list, start: start, limit: limit, filter: filter)
                let runs = list.rows.rowRuns(filter: filter, from: Int(clamping: header.offset), limit: header.count)
                let revision = list.summary.revision
                return PageRows(summary: list.summary, header: header, filter: filter, runs: runs, keys: list.keys,
                                rewrites: rewrites, committedRevision: committed?(list.summary.id, revision) ?? revision)
            }
        }
    }

    /// How often the cached revisions of `list` were rewritten: by a
    /// rebase of the node's commits in flight onto another node's, or a
    /// reload that replaced the list. A page read while the list had
    /// changes not yet committed shows what was committed at its revision
    /// if this has not moved once those changes committed.
    public func rewrites(of list: ListID) -> UInt64 {
        reading { $0.rewrites[list] ?? 0 }
    }

    /// Resolves where a page starts and how many rows it has.
    private static func header(of list: borrowing ListState, start: PageStart, limit: Int, filter: RowFilter) throws(ChecklistError) -> PageHeader {
        let total = list.rows.count(filter)
        let offset: UInt64
        switch start {
        case .offset(let o):
            offset = o
        case .anchor(let id):
            guard let position = list.rows.position(of: id) else { throw ListState.itemNotFound(id) }
            offset = UInt64(position.index(filter))
        case .key(let key):
            guard let id = list.keys.item(withKey: key), let position = list.rows.position(of: id) else {
                throw .notFound("no item has client key \"\(key)\"")
            }
            offset = UInt64(position.index(filter))
        }
        let count = offset < UInt64(total) ? min(limit, total - Int(offset)) : 0
        return PageHeader(list: list.summary.id, revision: list.summary.revision, total: UInt64(total),
                          offset: offset, count: count)
    }
}

/// The rows of one page as `Store.pageRows` resolved them: the page's
/// header and shares of the leaves its rows are in. Reading them needs no
/// lock; they stay as they were at `header.revision`.
public struct PageRows: Sendable {
    /// The list, as of this page.
    public let summary: ListSummary
    /// The page: its counts and how many rows it holds (`count`).
    public let header: PageHeader
    let filter: RowFilter
    let runs: [RowRun]
    /// A share of the list's client keys as of this page.
    let keys: ClientKeyIndex
    /// How often the list's cached revisions had been rewritten when the
    /// page was read (`Store.rewrites(of:)`).
    public let rewrites: UInt64
    /// The list's committed revision when the page was read (its own when
    /// `pageRows` was given no `committed`): below `summary.revision`, the
    /// page shows changes not committed yet.
    public let committedRevision: Revision

    /// Whether reading the rows needs the list's client keys: the list has
    /// some and the reader wants them (`forEachRun` leaves them out).
    public func needsKeys(_ withKeys: Bool) -> Bool { withKeys && !keys.isEmpty }

    /// At least as many bytes as the texts of the page's rows take (exact
    /// without a filter): with a bound per row for the other fields, what
    /// an encoder reserves to write the page in one pass.
    public var textBytesBound: Int {
        runs.reduce(0) { $0 + $1.textBytesBound(filter: filter) }
    }

    /// Visits the page's rows leaf by leaf, as columns (`RowColumns`): the
    /// fast path for an encoder that needs no client keys. The runs hold
    /// `header.count` rows in all, in order.
    public func forEachRun(_ visit: (RowColumns) -> Void) {
        for run in runs { run.withColumns(filter: filter, visit) }
    }

    /// Visits the page's `header.count` rows in order. Each `RowView` lends
    /// its text bytes from the shared leaf: do not keep it (or its bytes)
    /// past the call of `visit`.
    ///
    /// With `withKeys` false the rows' `clientKey` stays nil even when the
    /// list has keys (an encoder for a client that did not announce
    /// CLIENT_KEYS needs none, and looking each up costs a hash lookup).
    public func forEach(withKeys: Bool = true, _ visit: (RowView) -> Void) {
        if keys.isEmpty || !withKeys {
            for run in runs {
                _ = run.leaf.visit(from: run.slot, filter: filter, limit: run.rows, visit)
            }
        } else {
            for run in runs {
                _ = run.leaf.visit(from: run.slot, filter: filter, limit: run.rows) { visit($0.keyed(by: keys)) }
            }
        }
    }
}
