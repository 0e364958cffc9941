import ChecklistModel

// Adding a `RowBatch`: its full leaves are filed as they are (their ids go
// into the locator in one step per page); only rows at the seams are copied.
extension RowTreeBuilder {
    /// Appends the first `limit` rows of `batch` (all by default), in
    /// order. Returns nil, or the index in the batch of the first row whose
    /// id is there already: the rows before it are appended, the others
    /// not.
    ///
    /// The leaf being filled when the batch comes may be short: it is
    /// topped up from the batch to half a leaf (or takes the batch's first
    /// leaf whole when both fit in one) and then closed, and the rest of
    /// that first leaf starts the next one, so every leaf but the last
    /// keeps at least half a leaf of rows (`RowTree`'s balance) while every
    /// other leaf of the batch is filed without copying a row.
    mutating func append(_ batch: RowBatch, limit: Int? = nil) -> Int? {
        precondition(!finished, "RowTreeBuilder: append after finish")
        let capacity = tree.leafCapacity
        let half = capacity / 2
        let limit = min(limit ?? batch.count, batch.count)
        var base = 0
        for (k, leaf) in batch.leaves.enumerated() {
            let end = min(leaf.count, limit - base)
            if end <= 0 { break }
            defer { base += leaf.count }
            var from = 0
            if filler.count > 0 {
                if filler.count < half {
                    let take = min(end, filler.count + leaf.count <= capacity ? leaf.count : half - filler.count)
                    if let dup = appendRows(of: leaf, 0..<take) { return base + dup }
                    from = take
                }
                if from < end && filler.count > 0 { flushLeaf() }
            }
            if from == end { continue }
            let whole = from == 0 && end == leaf.count && (leaf.count == capacity || k == batch.leaves.count - 1)
            if whole, tree.locator.insertAllIfAbsent(leaf.ids, leaf: tree.leaves.count) {
                if leaf.count == capacity { add(leaf) } else { filler.load(leaf) }
                continue
            }
            if let dup = appendRows(of: leaf, from..<end) { return base + dup }
        }
        return nil
    }

    /// Appends rows `range` of `leaf` one by one; the slot of the first
    /// whose id is there already, if any.
    private mutating func appendRows(of leaf: RowLeaf, _ range: Range<Int>) -> Int? {
        for slot in range where !leaf.withView(slot, { append($0) }) { return slot }
        return nil
    }
}
