import ChecklistModel

// Reading runs of rows without copying them: the page path.
extension RowTree {
    /// Calls `body` for up to `limit` rows matching `filter`, starting with
    /// the `offset`-th matching row, in list order. An offset at or past the
    /// end visits nothing.
    ///
    /// Cost: one descent (O(height × fan-out)), then O(1) per row scanned,
    /// following the leaf chain (see `forEachRun`). No allocation: each
    /// `RowView` points into the leaf's arena.
    func forEachRow(filter: RowFilter, from offset: Int, limit: Int, _ body: (RowView) -> Void) {
        forEachRun(filter: filter, from: offset, limit: limit) { leaf, slot, rows in
            _ = leaf.visit(from: slot, filter: filter, limit: rows, body)
        }
    }

    /// The leaves holding up to `limit` rows matching `filter` from the
    /// `offset`-th, each a copy-on-write share (no row is copied): they can
    /// be read after the store's lock is released, while the tree changes.
    func rowRuns(filter: RowFilter, from offset: Int, limit: Int) -> [RowRun] {
        var runs: [RowRun] = []
        runs.reserveCapacity(2)  // a page of 100 rows of the whole list spans one or two leaves
        forEachRun(filter: filter, from: offset, limit: limit) { leaf, slot, rows in
            runs.append(RowRun(leaf: leaf, slot: slot, rows: rows))
        }
        return runs
    }

    /// Calls `body` with each leaf that holds some of the up to `limit` rows
    /// matching `filter` from the `offset`-th, in list order: the leaf, the
    /// slot to start at and how many matching rows to take from there.
    ///
    /// One descent, then the leaf chain. A leaf without a matching row is
    /// not walked through: the next matching row is found by a new descent,
    /// so sparse filters cost O(log n) per leaf visited, never a scan of the
    /// gap.
    private func forEachRun(filter: RowFilter, from offset: Int, limit: Int,
                            _ body: (RowLeaf, _ slot: Int, _ rows: Int) -> Void) {
        let total = count(filter)
        guard limit > 0, offset >= 0, offset < total else { return }
        let end = offset + Swift.min(limit, total - offset)
        var next = offset
        var (leaf, slot) = findRow(next, filter: filter)
        leaves.withUnsafeBufferPointer { leaves in
            while true {
                let rows = Swift.min(leaves[leaf].count(filter, from: slot), end - next)
                body(leaves[leaf], slot, rows)
                next += rows
                guard next < end else { return }
                let following = leaves[leaf].next
                if following >= 0, leaves[following].count(filter) > 0 {
                    leaf = following
                    slot = 0
                } else {
                    (leaf, slot) = findRow(next, filter: filter)
                }
            }
        }
    }

    /// Every row, in order (tests, small lists).
    func items() -> [Item] {
        var out: [Item] = []
        out.reserveCapacity(count)
        forEachRow(filter: .all, from: 0, limit: count) { out.append($0.item) }
        return out
    }
}

/// Matching rows of one leaf, from a slot on: a copy-on-write share of the
/// leaf (its columns are shared, not copied), readable without the store's
/// lock. A writer that changes the leaf meanwhile copies what it changes.
struct RowRun: Sendable {
    let leaf: RowLeaf
    let slot: Int
    /// Matching rows to visit from `slot`.
    let rows: Int
}

extension RowLeaf {
    /// Number of rows `filter` matches from `slot` to the leaf's end.
    func count(_ filter: RowFilter, from slot: Int) -> Int {
        if filter == .all { return count - slot }
        let want: UInt8 = filter == .checked ? ItemFlags.checked.rawValue : 0
        return flags.withUnsafeBufferPointer { flags in
            var matching = 0
            for f in flags[slot...] where f & ItemFlags.checked.rawValue == want { matching &+= 1 }
            return matching
        }
    }

    /// Calls `body` for up to `limit` matching rows from `start`; returns how
    /// many it visited.
    func visit(from start: Int, filter: RowFilter, limit: Int, _ body: (RowView) -> Void) -> Int {
        let mask: UInt8 = filter == .all ? 0 : ItemFlags.checked.rawValue
        let want: UInt8 = filter == .checked ? ItemFlags.checked.rawValue : 0
        return arena.withUnsafeBytes { text in
            withExtendedLifetime(ids) { ids in
                flags.withUnsafeBufferPointer { flags in
                    textEnds.withUnsafeBufferPointer { ends in
                        var visited = 0
                        var slot = start
                        while slot < ids.count, visited < limit {
                            let f = flags[slot]
                            if f & mask == want {
                                let from = slot == 0 ? 0 : Int(ends[slot &- 1])
                                body(RowView(
                                    id: ItemID(ids[slot]),
                                    flags: f,
                                    due: f & ItemFlags.hasDue.rawValue != 0 ? dues[slot] : nil,
                                    price: f & ItemFlags.hasPrice.rawValue != 0 ? prices[slot] : nil,
                                    textBytes: UnsafeRawBufferPointer(rebasing: text[from..<Int(ends[slot])])))
                                visited &+= 1
                            }
                            slot &+= 1
                        }
                        return visited
                    }
                }
            }
        }
    }
}
