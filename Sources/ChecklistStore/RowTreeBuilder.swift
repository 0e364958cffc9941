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
    private var tree: RowTree
    /// The leaf being filled; its text bytes collect in `arena` first.
    private var leaf = RowLeaf()
    private var arena: [UInt8] = []
    private(set) var finished = false

    init(shape: RowTreeShape) {
        tree = RowTree(leafCapacity: shape.leafCapacity, innerCapacity: shape.innerCapacity)
        tree.leaves = []
        arena.reserveCapacity(shape.leafCapacity * 64)
        startLeaf()
    }

    /// Rows appended so far.
    var count: Int { tree.count + leaf.count }

    /// Whether a row with `id` was appended.
    func contains(_ id: ItemID) -> Bool { tree.locator.leaf(of: id.rawValue) != nil }

    /// Appends the next row; returns false (and appends nothing) when a row
    /// with the same id is there already.
    mutating func append(_ row: ImportedItems.View) -> Bool {
        precondition(!finished, "RowTreeBuilder: append after finish")
        guard tree.locator.insertIfAbsent(row.id.rawValue, leaf: tree.leaves.count) else { return false }
        var f: UInt8 = 0
        if row.checked { f |= ItemFlags.checked.rawValue; leaf.checkedCount += 1 }
        if row.remind { f |= ItemFlags.remind.rawValue }
        let slot = leaf.ids.count
        if row.due != nil { f |= ItemFlags.hasDue.rawValue }
        if row.price != nil { f |= ItemFlags.hasPrice.rawValue }
        Self.append(row.due, to: &leaf.dues, at: slot, capacity: tree.leafCapacity)
        Self.append(row.price, to: &leaf.prices, at: slot, capacity: tree.leafCapacity)
        leaf.ids.append(row.id.rawValue)
        leaf.flags.append(f)
        arena.append(contentsOf: row.text)
        precondition(arena.count <= Int(UInt32.max), "RowLeaf: text arena over 4 GiB")
        leaf.textEnds.append(UInt32(arena.count))
        if leaf.ids.count == tree.leafCapacity { flushLeaf() }
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
        if leaf.count > 0 || tree.leaves.isEmpty { flushLeaf() }
        arena = []
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

    private mutating func startLeaf() {
        leaf = RowLeaf()
        leaf.ids.reserveCapacity(tree.leafCapacity)
        leaf.flags.reserveCapacity(tree.leafCapacity)
        leaf.textEnds.reserveCapacity(tree.leafCapacity)
    }

    /// Moves the filled leaf into the tree, its arena copied at its exact size.
    private mutating func flushLeaf() {
        leaf.arena = [UInt8](unsafeUninitializedCapacity: arena.count) { buffer, initialized in
            _ = buffer.initialize(fromContentsOf: arena)
            initialized = arena.count
        }
        arena.removeAll(keepingCapacity: true)
        tree.count += leaf.count
        tree.checkedCount += leaf.checkedCount
        tree.leaves.append(leaf)
        startLeaf()
    }

    /// Appends to an optional column (empty while no row of the leaf has a
    /// value), making it when the first value comes at `slot`.
    private static func append(_ value: Int64?, to column: inout [Int64], at slot: Int, capacity: Int) {
        if column.isEmpty {
            guard let value else { return }
            column.reserveCapacity(capacity)
            column.append(contentsOf: repeatElement(0, count: slot))
            column.append(value)
        } else {
            column.append(value ?? 0)
        }
    }
}
