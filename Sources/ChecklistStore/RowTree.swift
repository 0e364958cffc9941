import ChecklistModel

/// The rows of one list: an order-statistic B+tree of items.
///
/// Layout
/// - Rows live in leaves (`RowLeaf`), column-wise, texts in one byte arena
///   per leaf. Leaves sit in a pool (`leaves`), inner nodes in flat columns
///   (`RowInnerNodes`); they refer to each other by number, so the tree
///   holds no class instances, is a plain `Sendable` value and descending
///   it costs no reference counting.
/// - Every inner node keeps, per child, the number of rows and of checked
///   rows in that child's subtree. "Row i", "the j-th checked row" and "the
///   j-th unchecked row" are found by one descent in O(height × fan-out).
/// - Every node knows its parent, and `locator` maps an item id to its leaf,
///   so an item is found by id, and its index computed, in O(height) too.
/// - `count` and `checkedCount` are kept at the top: O(1).
///
/// Capacities (chosen by measurement, see `defaultLeafCapacity`) are
/// parameters so that tests reach a deep tree with few rows.
///
/// Balance: leaves hold `leafCapacity / 2 ... leafCapacity` rows and inner
/// nodes `innerCapacity / 2 ... innerCapacity` children, except the root and
/// the nodes on the rightmost path, which may hold fewer (at least one). A
/// row appended at the very end of the list splits a full last leaf unevenly
/// (the old leaf stays full, the new last leaf gets one row), so lists built
/// by appending (restores, "add at the end") get full leaves rather than
/// half-full ones. At most one node per level is under half full, so the
/// height stays O(log n).
///
/// Value semantics come from the arrays (copy on write); the store never
/// copies a list it is about to mutate. The one share it hands out is of
/// single leaves, to a page being encoded (`rowRuns`): a commit meanwhile
/// copies the few columns it changes of those leaves, never the tree.
struct RowTree: Sendable {
    /// Rows per leaf. Measured with a scratch program on 1M rows of 40-byte
    /// texts (release build; instructions per operation from callgrind,
    /// fan-out 32; memory as RSS growth), leaf capacity 64 / 128 / 256:
    ///   random insert 4.6K / 4.3K / 4.1K, delete 2.6K / 2.7K / 4.0K,
    ///   move 8.1K / 8.4K / 9.2K, toggle by id 0.9K / 1.3K / 1.3K,
    ///   position(of:) 1.4K / 1.7K / 2.1K, page of 100 rows 5.1K / 5.0K / 4.8K
    ///   (checked-only page: 10.0K / 9.6K / 10.0K), memory of an appended
    ///   list 63.6 / 62.5 / 61.0 bytes per row.
    /// Bigger leaves shift and scan more per edit, smaller ones cost more
    /// descents per page and more per-leaf overhead; 128 sits in the flat
    /// middle of both curves.
    static let defaultLeafCapacity = 128
    /// Children per inner node. Same measurement with 128-row leaves,
    /// fan-out 16 / 32 / 64: insert 4.1K / 4.3K / 4.6K, delete 2.4K / 2.7K /
    /// 2.8K, move 8.3K / 8.4K / 9.0K, toggle 1.0K / 1.3K / 1.0K, position
    /// 1.3K / 1.7K / 1.7K, page 4.9K / 5.0K / 5.2K. Scanning a node's
    /// children costs more than the extra level a narrower node needs, so
    /// 16 wins slightly everywhere; 10M rows are then 5 levels deep.
    static let defaultInnerCapacity = 16

    let leafCapacity: Int
    let innerCapacity: Int
    /// Number of rows. (Set directly only by `RowTreeBuilder`.)
    var count = 0
    /// Number of checked rows.
    var checkedCount = 0
    /// UTF-8 bytes of all rows' texts (the quota `--quota-bytes` counts them).
    var textBytes = 0

    var leaves: [RowLeaf] = [RowLeaf()]
    var freeLeaves: [Int] = []
    var inner: RowInnerNodes
    /// Index of the root: in `leaves` when `height == 0`, else in `inner`.
    var root = 0
    /// Number of inner levels above the leaves.
    var height = 0
    var locator = ItemLocator()

    init(leafCapacity: Int = RowTree.defaultLeafCapacity, innerCapacity: Int = RowTree.defaultInnerCapacity) {
        precondition(leafCapacity >= 4 && innerCapacity >= 4, "RowTree capacities must be at least 4")
        self.leafCapacity = leafCapacity
        self.innerCapacity = innerCapacity
        self.inner = RowInnerNodes(capacity: innerCapacity)
    }

    var minLeafCount: Int { leafCapacity / 2 }
    var minInnerCount: Int { innerCapacity / 2 }
    var uncheckedCount: Int { count - checkedCount }

    /// Number of rows `filter` matches.
    func count(_ filter: RowFilter) -> Int {
        switch filter {
        case .all: return count
        case .checked: return checkedCount
        case .unchecked: return count - checkedCount
        }
    }

    // MARK: Finding rows

    func contains(_ id: ItemID) -> Bool {
        locator.leaf(of: id.rawValue) != nil
    }

    /// Whether `id` is checked (nil: no such row), read from its leaf
    /// alone: what a TOGGLE needs, without the walk up that `position(of:)`
    /// makes for the row's index.
    func isChecked(_ id: ItemID) -> Bool? {
        guard let (leaf, slot) = locate(id) else { return nil }
        return withLeaf(leaf) { $0.flags[slot] & ItemFlags.checked.rawValue != 0 }
    }

    /// The leaf and slot holding `id`.
    func locate(_ id: ItemID) -> (leaf: Int, slot: Int)? {
        guard let leaf = locator.leaf(of: id.rawValue),
              let slot = withLeaf(leaf, { $0.slot(of: id.rawValue) }) else { return nil }
        return (leaf, slot)
    }

    /// Where a row is: its index among all rows and how many checked rows
    /// precede it, from which its index under any filter follows.
    struct Position: Hashable {
        var index: Int
        var checkedBefore: Int
        var checked: Bool

        /// The row's index among the rows matching `filter`, or, if the row
        /// does not match, the index the next matching row has.
        func index(_ filter: RowFilter) -> Int {
            switch filter {
            case .all: return index
            case .checked: return checkedBefore
            case .unchecked: return index - checkedBefore
            }
        }
    }

    /// The position of `id`, by climbing from its leaf: O(height × fan-out).
    func position(of id: ItemID) -> Position? {
        guard let (leaf, slot) = locate(id) else { return nil }
        var index = slot
        var checkedBefore = 0
        let checked = withLeaf(leaf) { leaf in
            leaf.flags.withUnsafeBufferPointer { flags in
                for i in 0..<slot { checkedBefore &+= Int(flags[i] & ItemFlags.checked.rawValue) }
                return flags[slot] & ItemFlags.checked.rawValue != 0
            }
        }
        var child = leaf
        var parent = leaves[leaf].parent
        while parent >= 0 {
            let c = inner.index(of: child, in: parent)
            let b = inner.base(parent)
            for k in b..<(b &+ c) {
                index &+= inner.rows[k]
                checkedBefore &+= inner.checked[k]
            }
            child = parent
            parent = inner.parent[parent]
        }
        return Position(index: index, checkedBefore: checkedBefore, checked: checked)
    }

    /// The index of `id` among all rows.
    func index(of id: ItemID) -> Int? {
        position(of: id)?.index
    }

    /// Leaf and slot of the `j`-th row among the rows matching `filter`
    /// (`0 <= j < count(filter)`), by one descent on the counts.
    func findRow(_ j: Int, filter: RowFilter) -> (leaf: Int, slot: Int) {
        precondition(j >= 0 && j < count(filter), "row index out of range")
        var j = j
        var node = root
        if height > 0 {
            inner.rows.withUnsafeBufferPointer { rows in
                inner.checked.withUnsafeBufferPointer { checked in
                    for _ in 0..<height {
                        let b = inner.base(node)
                        let end = b &+ inner.size[node]
                        var i = b
                        while true {
                            precondition(i < end, "RowTree: counts do not add up")
                            let m: Int
                            switch filter {
                            case .all: m = rows[i]
                            case .checked: m = checked[i]
                            case .unchecked: m = rows[i] &- checked[i]
                            }
                            if j < m { break }
                            j &-= m
                            i &+= 1
                        }
                        node = inner.child[i]
                    }
                }
            }
        }
        if filter == .all { return (node, j) }
        return (node, withLeaf(node) { $0.slot(ofMatch: j, filter: filter) })
    }

    /// Leaf and slot where a row inserted at `index` (`0...count`) goes.
    func insertionPoint(_ index: Int) -> (leaf: Int, slot: Int) {
        precondition(index >= 0 && index <= count, "insertion index out of range")
        var node = root
        if index == count {
            // After the last row: the last child all the way down, where the
            // descent on the counts ends too, without summing them.
            if height > 0 {
                inner.child.withUnsafeBufferPointer { child in
                    inner.size.withUnsafeBufferPointer { size in
                        for _ in 0..<height { node = child[inner.base(node) &+ size[node] &- 1] }
                    }
                }
            }
            return (node, withLeaf(node) { $0.count })
        }
        var j = index
        if height > 0 {
            inner.rows.withUnsafeBufferPointer { rows in
                for _ in 0..<height {
                    let b = inner.base(node)
                    let last = b &+ inner.size[node] &- 1
                    var i = b
                    while i < last, j >= rows[i] {
                        j &-= rows[i]
                        i &+= 1
                    }
                    node = inner.child[i]
                }
            }
        }
        return (node, j)
    }

    /// The row at `index` among all rows.
    func item(at index: Int) -> Item {
        let (leaf, slot) = findRow(index, filter: .all)
        return withLeaf(leaf) { $0.item(at: slot) }
    }

    /// The row with `id`.
    func item(_ id: ItemID) -> Item? {
        guard let (leaf, slot) = locate(id) else { return nil }
        return withLeaf(leaf) { $0.item(at: slot) }
    }

    /// Reads leaf `index` in place. (`leaves[index].method()` may copy the
    /// leaf struct first, retaining and releasing each of its columns.)
    @inline(__always)
    func withLeaf<R>(_ index: Int, _ body: (RowLeaf) -> R) -> R {
        leaves.withUnsafeBufferPointer { body($0[index]) }
    }

    // MARK: Node links

    /// The parent of a node; `level` 0 means `node` is a leaf.
    func parent(of node: Int, level: Int) -> Int {
        level == 0 ? leaves[node].parent : inner.parent[node]
    }

    mutating func setParent(of node: Int, level: Int, to parent: Int) {
        if level == 0 { leaves[node].parent = parent } else { inner.parent[node] = parent }
    }

    /// Adds `rows` and `checked` to the counts on the path from leaf `leaf` up.
    mutating func propagate(fromLeaf leaf: Int, rows: Int, checked: Int) {
        var child = leaf
        var parent = withLeaf(leaf) { $0.parent }
        while parent >= 0 {
            let i = inner.base(parent) + inner.index(of: child, in: parent)
            inner.rows[i] += rows
            if checked != 0 { inner.checked[i] += checked }
            child = parent
            parent = inner.parent[parent]
        }
        count += rows
        checkedCount += checked
    }
}

extension RowLeaf {
    /// The slot of the `j`-th row of this leaf matching `filter`.
    func slot(ofMatch j: Int, filter: RowFilter) -> Int {
        if filter == .all { return j }
        let want: UInt8 = filter == .checked ? ItemFlags.checked.rawValue : 0
        return flags.withUnsafeBufferPointer { flags in
            var seen = 0
            for slot in 0..<flags.count where flags[slot] & ItemFlags.checked.rawValue == want {
                if seen == j { return slot }
                seen += 1
            }
            preconditionFailure("RowTree: leaf checked count out of step")
        }
    }
}

/// The node capacities of a `RowTree`.
struct RowTreeShape: Hashable, Sendable {
    var leafCapacity: Int
    var innerCapacity: Int

    static let standard = RowTreeShape(leafCapacity: RowTree.defaultLeafCapacity, innerCapacity: RowTree.defaultInnerCapacity)
}
