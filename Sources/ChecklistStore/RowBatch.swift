import ChecklistModel

/// Consecutive rows of one list, already laid out as finished leaves: made
/// by a `RowBatchBuilder` off the thread that restores the list (a snapshot
/// reader's worker), then added to a `ListRestorer` in one step
/// (`ListRestorer.append(_:)`), which only files the leaves and their ids.
public struct RowBatch: Sendable {
    /// Full leaves, then at most one that is not.
    let leaves: [RowLeaf]
    /// Number of rows.
    public let count: Int

    init(leaves: [RowLeaf]) {
        self.leaves = leaves
        count = leaves.reduce(0) { $0 + $1.count }
    }

    /// The id of row `index`.
    func id(at index: Int) -> ItemID {
        withRow(at: index) { $0.id }
    }

    /// Lends row `index` as a view (its text valid during the call).
    func withRow<T, E: Error>(at index: Int, _ body: (ImportedItems.View) throws(E) -> T) throws(E) -> T {
        var index = index
        for leaf in leaves {
            if index < leaf.count {
                let result: Result<T, E> = leaf.withView(index) { row in Result { () throws(E) in try body(row) } }
                return try result.get()
            }
            index -= leaf.count
        }
        preconditionFailure("RowBatch: row \(index) out of range")
    }

    /// The index of the first row whose id is not in `ids`, or whose text
    /// is longer than `maxTextBytes` (when given), if any: the first row
    /// the checks of a list being built would refuse before its id is
    /// looked up.
    func firstRow(idOutside ids: Range<UInt64>, textLongerThan maxTextBytes: Int? = nil) -> Int? {
        var base = 0
        for leaf in leaves {
            var first = leaf.ids.firstIndexOutside(ids)
            if let maxTextBytes {
                var start = 0
                for (slot, end) in leaf.textEnds.prefix(first ?? leaf.count).enumerated() {
                    if Int(end) - start > maxTextBytes {
                        first = slot
                        break
                    }
                    start = Int(end)
                }
            }
            if let first { return base + first }
            base += leaf.count
        }
        return nil
    }
}

/// Builds `RowBatch`es from rows given in list order, on any thread: the
/// leaves come out as `ListRestorer.append(_: ImportedItems.View)` would
/// fill them. Ids are not checked here (the restorer checks them when the
/// batch is added).
public struct RowBatchBuilder: Sendable {
    private var filler: LeafFiller
    private var leaves: [RowLeaf] = []

    /// A builder for the leaf shape of `store`'s lists.
    public init(for store: Store) {
        self.init(shape: store.treeShape)
    }

    init(shape: RowTreeShape) {
        filler = LeafFiller(capacity: shape.leafCapacity)
    }

    /// Rows appended since the last `take()`.
    public var count: Int { leaves.count * filler.capacity + filler.count }

    /// Appends the next row; false (nothing appended) for a row with a
    /// client key, which only `ListRestorer.append(_: ImportedItems.View)`
    /// takes (the key is checked against the list's other keys).
    public mutating func append(_ row: ImportedItems.View) -> Bool {
        guard row.clientKey == nil else { return false }
        filler.append(row)
        if filler.isFull { leaves.append(filler.take()) }
        return true
    }

    /// The rows appended since the last call, as a batch; the builder
    /// starts anew.
    public mutating func take() -> RowBatch {
        if filler.count > 0 { leaves.append(filler.take()) }
        defer { leaves = [] }
        return RowBatch(leaves: leaves)
    }
}
