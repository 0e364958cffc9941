/// The inner nodes of a `RowTree`, stored flat so that descending the tree
/// touches a few plain arrays and no reference counts.
///
/// Node `n` owns the block `n * stride ..< n * stride + size[n]` of the
/// `child`, `rows` and `checked` columns: its children (leaf or inner node
/// numbers), and the row and checked-row counts of each child's subtree.
/// `stride` is the capacity plus one, so a node can take one child too many
/// before it is split.
struct RowInnerNodes: Sendable {
    let capacity: Int
    let stride: Int
    /// Parent node, or -1 for the root.
    var parent: [Int] = []
    /// 1 when the children are leaves, else inner nodes of `level - 1`.
    var level: [Int] = []
    /// Number of children.
    var size: [Int] = []
    var child: [Int] = []
    var rows: [Int] = []
    var checked: [Int] = []
    private var free: [Int] = []

    init(capacity: Int) {
        self.capacity = capacity
        self.stride = capacity + 1
    }

    /// Number of node slots, used or free (for invariant checks).
    var slotCount: Int { size.count }

    func isFree(_ node: Int) -> Bool { free.contains(node) }

    @inline(__always)
    func base(_ node: Int) -> Int { node &* stride }

    /// The children of `node`, in order.
    func children(of node: Int) -> ArraySlice<Int> {
        child[base(node)..<(base(node) + size[node])]
    }

    /// Total rows and checked rows under `node`.
    func totals(of node: Int) -> (rows: Int, checked: Int) {
        let range = base(node)..<(base(node) + size[node])
        return (rows[range].reduce(0, +), checked[range].reduce(0, +))
    }

    /// The position of `c` among `node`'s children: a scan of at most
    /// `capacity` integers, from the last child (where appends happen).
    func index(of c: Int, in node: Int) -> Int {
        let b = base(node)
        return child.withUnsafeBufferPointer { child in
            var k = size[node]
            while k > 0 {
                k &-= 1
                if child[b &+ k] == c { return k }
            }
            preconditionFailure("RowTree: broken parent link")
        }
    }

    mutating func allocate(level: Int) -> Int {
        let node: Int
        if let reused = free.popLast() {
            node = reused
        } else {
            node = size.count
            parent.append(-1)
            self.level.append(0)
            size.append(0)
            child.append(contentsOf: repeatElement(-1, count: stride))
            rows.append(contentsOf: repeatElement(0, count: stride))
            checked.append(contentsOf: repeatElement(0, count: stride))
        }
        parent[node] = -1
        self.level[node] = level
        size[node] = 0
        return node
    }

    mutating func release(_ node: Int) {
        size[node] = 0
        parent[node] = -1
        free.append(node)
    }

    /// Inserts a child entry at position `k` of `node`.
    mutating func insert(child c: Int, rows r: Int, checked k2: Int, at k: Int, in node: Int) {
        let b = base(node)
        let n = size[node]
        precondition(n < stride, "RowTree: inner node overfull")
        var i = n
        while i > k {
            child[b + i] = child[b + i - 1]
            rows[b + i] = rows[b + i - 1]
            checked[b + i] = checked[b + i - 1]
            i -= 1
        }
        child[b + k] = c
        rows[b + k] = r
        checked[b + k] = k2
        size[node] = n + 1
    }

    /// Removes the child entry at position `k` of `node`.
    mutating func remove(at k: Int, in node: Int) {
        let b = base(node)
        let n = size[node]
        for i in k..<(n - 1) {
            child[b + i] = child[b + i + 1]
            rows[b + i] = rows[b + i + 1]
            checked[b + i] = checked[b + i + 1]
        }
        size[node] = n - 1
    }

    /// Moves the entries `range` of node `from` to position `at` of node
    /// `to` (a different node); returns the rows and checked rows moved. The
    /// caller re-parents the moved children.
    @discardableResult
    mutating func move(_ range: Range<Int>, from source: Int, to target: Int, at position: Int) -> (rows: Int, checked: Int) {
        precondition(source != target && size[target] + range.count <= stride, "RowTree: bad inner move")
        let s = base(source)
        let t = base(target)
        let moved = range.count
        // Open a gap in the target.
        var i = size[target] - 1
        while i >= position {
            child[t + i + moved] = child[t + i]
            rows[t + i + moved] = rows[t + i]
            checked[t + i + moved] = checked[t + i]
            i -= 1
        }
        var totals = (rows: 0, checked: 0)
        for j in 0..<moved {
            child[t + position + j] = child[s + range.lowerBound + j]
            rows[t + position + j] = rows[s + range.lowerBound + j]
            checked[t + position + j] = checked[s + range.lowerBound + j]
            totals.rows += rows[t + position + j]
            totals.checked += checked[t + position + j]
        }
        size[target] += moved
        // Close the hole in the source.
        let n = size[source]
        for j in range.lowerBound..<(n - moved) {
            child[s + j] = child[s + j + moved]
            rows[s + j] = rows[s + j + moved]
            checked[s + j] = checked[s + j + moved]
        }
        size[source] = n - moved
        return totals
    }
}
