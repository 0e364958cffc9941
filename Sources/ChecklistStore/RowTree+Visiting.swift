import ChecklistModel

// Reading runs of rows without copying them: the page path.
extension RowTree {
    /// Calls `body` for up to `limit` rows matching `filter`, starting with
    /// the `offset`-th matching row, in list order. An offset at or past the
    /// end visits nothing.
    ///
    /// Cost: one descent (O(height × fan-out)), then O(1) per row scanned,
    /// following the leaf chain. A leaf without a matching row is not walked
    /// through: the next matching row is found by a new descent, so sparse
    /// filters cost O(log n) per leaf visited, never a scan of the gap. No
    /// allocation: each `RowView` points into the leaf's arena.
    func forEachRow(filter: RowFilter, from offset: Int, limit: Int, _ body: (RowView) -> Void) {
        let total = count(filter)
        guard limit > 0, offset >= 0, offset < total else { return }
        let end = offset + Swift.min(limit, total - offset)
        var next = offset
        var (leaf, slot) = findRow(next, filter: filter)
        leaves.withUnsafeBufferPointer { leaves in
            while true {
                next += leaves[leaf].visit(from: slot, filter: filter, limit: end - next, body)
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

extension RowLeaf {
    /// Calls `body` for up to `limit` matching rows from `start`; returns how
    /// many it visited.
    func visit(from start: Int, filter: RowFilter, limit: Int, _ body: (RowView) -> Void) -> Int {
        let mask: UInt8 = filter == .all ? 0 : RowFlag.checked
        let want: UInt8 = filter == .checked ? RowFlag.checked : 0
        return arena.withUnsafeBytes { text in
            ids.withUnsafeBufferPointer { ids in
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
                                    due: f & RowFlag.hasDue != 0 ? dues[slot] : nil,
                                    price: f & RowFlag.hasPrice != 0 ? prices[slot] : nil,
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
