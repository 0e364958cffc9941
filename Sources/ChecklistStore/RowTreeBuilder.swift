import ChecklistModel

/// Builds a `RowTree` from rows given in list order (restores, imports,
/// the replay of an imported list), far cheaper than appending them one by
/// one: each row is copied once into the leaf being filled, and the inner
/// nodes are made bottom-up when the last row is in (`finish()`), with no
/// descent, split or count propagation per row.
///
/// Leaves are filled to `leafCapacity` (the last one may hold fewer), with
/// their columns sized exactly: no spare capacity is kept, as an appended
/// tree trims its full leaves too. Inner nodes get `innerCapacity`
/// children, the last of each level fewer: the shape an appended tree has,
/// which `RowTree.invariantViolation()` accepts.
struct RowTreeBuilder: Sendable {
    var tree: RowTree
    /// The leaf being filled (it gets number `tree.leaves.count`).
    var filler: LeafFiller
    private(set) var finished = false

    init(shape: RowTreeShape) {
        tree = RowTree(leafCapacity: shape.leafCapacity, innerCapacity: shape.innerCapacity)
        tree.leaves = []
        filler = LeafFiller(capacity: shape.leafCapacity)
    }

    /// Rows appended so far.
    var count: Int { tree.count + filler.count }

    /// Whether a row with `id` was appended.
    func contains(_ id: ItemID) -> Bool { tree.locator.leaf(of: id.rawValue) != nil }

    /// Appends the next row; returns false (and appends nothing) when a row
    /// with the same id is there already.
    mutating func append(_ row: ImportedItems.View) -> Bool {
        precondition(!finished, "RowTreeBuilder: append after finish")
        guard tree.locator.insertIfAbsent(row.id.rawValue, leaf: tree.leaves.count) else { return false }
        filler.append(row)
        if filler.isFull { flushLeaf() }
        return true
    }

    /// Appends `item`; false when its id is there already.
    mutating func append(_ item: Item) -> Bool {
        item.withView { append($0) }
    }

    /// Completes the tree: the last leaf, the leaf chain and the inner
    /// levels. Later calls do nothing.
    mutating func finish() {
        guard !finished else { return }
        finished = true
        if filler.count > 0 || tree.leaves.isEmpty { flushLeaf() }
        filler.release()
        for l in 0..<(tree.leaves.count - 1) { tree.leaves[l].next = l + 1 }
        // Level by level: (node, rows, checked) of the level below.
        var level = tree.leaves.indices.map { (node: $0, rows: tree.leaves[$0].count, checked: tree.leaves[$0].checkedCount) }
        var height = 0
        while level.count > 1 {
            var above: [(node: Int, rows: Int, checked: Int)] = []
            above.reserveCapacity((level.count + tree.innerCapacity - 1) / tree.innerCapacity)
            for start in stride(from: 0, to: level.count, by: tree.innerCapacity) {
                let node = tree.inner.allocate(level: height + 1)
                var totals = (rows: 0, checked: 0)
                for (k, child) in level[start..<min(start + tree.innerCapacity, level.count)].enumerated() {
                    tree.inner.insert(child: child.node, rows: child.rows, checked: child.checked, at: k, in: node)
                    tree.setParent(of: child.node, level: height, to: node)
                    totals.rows += child.rows
                    totals.checked += child.checked
                }
                above.append((node, totals.rows, totals.checked))
            }
            level = above
            height += 1
        }
        tree.root = level[0].node
        tree.height = height
    }

    /// The finished tree (`finish()` first).
    var result: RowTree {
        precondition(finished, "RowTreeBuilder: result before finish")
        return tree
    }

    /// Builds a tree of `rows`, in order; nil when an id repeats.
    static func build<Rows: Sequence<Item>>(_ rows: Rows, shape: RowTreeShape) -> RowTree? {
        var builder = RowTreeBuilder(shape: shape)
        for item in rows where !builder.append(item) { return nil }
        builder.finish()
        return builder.result
    }

    // MARK: Leaves

    /// Moves the filled leaf into the tree, its arena copied at its exact size.
    mutating func flushLeaf() {
        add(filler.take())
    }

    /// Adds a finished leaf (its ids already in the locator) at the end.
    mutating func add(_ leaf: RowLeaf) {
        tree.count += leaf.count
        tree.checkedCount += leaf.checkedCount
        tree.textBytes += leaf.arena.count
        tree.leaves.append(leaf)
    }
}
