// Keeping the RowTree balanced: splitting full nodes, merging or evening out
// underfull ones, growing and shrinking the root. Rows that change leaf are
// re-pointed in the locator; children that change parent get their link set.
extension RowTree {
    // MARK: Leaf pool

    mutating func allocateLeaf(_ leaf: RowLeaf) -> Int {
        if let index = freeLeaves.popLast() {
            leaves[index] = leaf
            return index
        }
        leaves.append(leaf)
        return leaves.count - 1
    }

    mutating func releaseLeaf(_ index: Int) {
        leaves[index] = RowLeaf()
        freeLeaves.append(index)
    }

    // MARK: Splitting

    /// Moves the rows from `at` on into a new leaf right after `leaf` and
    /// returns the new leaf. `appending`: a row is being appended at the end
    /// of the list, so `leaf` keeps all its rows (it stays full and is
    /// trimmed to size, as rows are rarely inserted behind the end again)
    /// and the new, empty leaf takes the row; sequential loads thus fill
    /// leaves completely.
    mutating func splitLeaf(_ leaf: Int, at: Int, appending: Bool) -> Int {
        let moved = leaves[leaf].extract(at..<leaves[leaf].count)
        if appending { leaves[leaf].trimCapacity() }
        let right = allocateLeaf(moved)
        if appending { leaves[right].reserveCapacity(like: leaves[leaf]) }
        leaves[right].next = leaves[leaf].next
        leaves[leaf].next = right
        for id in moved.ids { locator.set(id, leaf: right) }
        addSibling(right, after: leaf, level: 0, rows: moved.count, checked: moved.checkedCount, appending: appending)
        return right
    }

    /// Splits an overfull inner node in two, like `splitLeaf`.
    private mutating func splitInner(_ node: Int, appending: Bool) {
        let n = inner.size[node]
        let at = appending ? innerCapacity : n / 2
        let level = inner.level[node]
        let right = inner.allocate(level: level)
        let moved = inner.move(at..<n, from: node, to: right, at: 0)
        reparentChildren(of: right, 0..<inner.size[right])
        addSibling(right, after: node, level: level, rows: moved.rows, checked: moved.checked, appending: appending)
    }

    /// Hooks node `right` (at `level`, 0 = leaf), which holds rows just moved
    /// out of `left`, into the tree directly after `left`.
    private mutating func addSibling(_ right: Int, after left: Int, level: Int, rows: Int, checked: Int, appending: Bool) {
        let parent = parent(of: left, level: level)
        guard parent >= 0 else {
            // `left` was the root: grow a new root above both.
            let newRoot = inner.allocate(level: level + 1)
            inner.insert(child: left, rows: count - rows, checked: checkedCount - checked, at: 0, in: newRoot)
            inner.insert(child: right, rows: rows, checked: checked, at: 1, in: newRoot)
            setParent(of: left, level: level, to: newRoot)
            setParent(of: right, level: level, to: newRoot)
            root = newRoot
            height += 1
            return
        }
        let c = inner.index(of: left, in: parent)
        let i = inner.base(parent) + c
        inner.rows[i] -= rows
        inner.checked[i] -= checked
        inner.insert(child: right, rows: rows, checked: checked, at: c + 1, in: parent)
        setParent(of: right, level: level, to: parent)
        let n = inner.size[parent]
        if n > innerCapacity {
            splitInner(parent, appending: appending && c + 2 == n)
        }
    }

    // MARK: Merging and evening out

    /// Restores the minimum fill of a non-root leaf: merges it with a
    /// neighbour when both fit in one leaf, else moves rows over from the
    /// neighbour so that both hold about half. Only the last node of a level
    /// can lack a neighbour under its parent (see `splitLeaf`); that parent
    /// is evened out first, which gives the node a neighbour.
    mutating func fixLeafUnderflow(_ leaf: Int) {
        let parent = leaves[leaf].parent
        guard parent >= 0 else { return }
        if inner.size[parent] == 1 {
            fixInnerUnderflow(parent)
            fixLeafUnderflow(leaf)
            return
        }
        let (lc, rc) = neighbours(of: leaf, in: parent)
        let b = inner.base(parent)
        let left = inner.child[b + lc]
        let right = inner.child[b + rc]
        let leftCount = leaves[left].count
        let total = leftCount + leaves[right].count

        if total <= leafCapacity {
            let moved = leaves[right].extract(0..<leaves[right].count)
            for id in moved.ids { locator.set(id, leaf: left) }
            leaves[left].insert(contentsOf: moved, at: leftCount)
            leaves[left].next = leaves[right].next
            inner.rows[b + lc] += moved.count
            inner.checked[b + lc] += moved.checkedCount
            inner.remove(at: rc, in: parent)
            releaseLeaf(right)
            fixInnerUnderflow(parent)
            return
        }

        let target = total / 2
        if leftCount > target {
            let moved = leaves[left].extract(target..<leftCount)
            for id in moved.ids { locator.set(id, leaf: right) }
            leaves[right].insert(contentsOf: moved, at: 0)
            shiftCounts(in: parent, from: lc, to: rc, rows: moved.count, checked: moved.checkedCount)
        } else {
            let moved = leaves[right].extract(0..<(target - leftCount))
            for id in moved.ids { locator.set(id, leaf: left) }
            leaves[left].insert(contentsOf: moved, at: leftCount)
            shiftCounts(in: parent, from: rc, to: lc, rows: moved.count, checked: moved.checkedCount)
        }
    }

    /// Restores the minimum fill of an inner node (as `fixLeafUnderflow`),
    /// or drops a root left with a single child.
    mutating func fixInnerUnderflow(_ node: Int) {
        if node == root {
            if height > 0, inner.size[node] == 1 {
                let child = inner.child[inner.base(node)]
                setParent(of: child, level: inner.level[node] - 1, to: -1)
                root = child
                height -= 1
                inner.release(node)
            }
            return
        }
        guard inner.size[node] < minInnerCount else { return }
        let parent = inner.parent[node]
        if inner.size[parent] == 1 {
            fixInnerUnderflow(parent)
            fixInnerUnderflow(node)
            return
        }
        let (lc, rc) = neighbours(of: node, in: parent)
        let b = inner.base(parent)
        let left = inner.child[b + lc]
        let right = inner.child[b + rc]
        let leftCount = inner.size[left]
        let total = leftCount + inner.size[right]

        if total <= innerCapacity {
            inner.move(0..<inner.size[right], from: right, to: left, at: leftCount)
            reparentChildren(of: left, leftCount..<total)
            inner.rows[b + lc] += inner.rows[b + rc]
            inner.checked[b + lc] += inner.checked[b + rc]
            inner.remove(at: rc, in: parent)
            inner.release(right)
            fixInnerUnderflow(parent)
            return
        }

        let target = total / 2
        if leftCount > target {
            let moved = inner.move(target..<leftCount, from: left, to: right, at: 0)
            reparentChildren(of: right, 0..<(leftCount - target))
            shiftCounts(in: parent, from: lc, to: rc, rows: moved.rows, checked: moved.checked)
        } else {
            let moved = inner.move(0..<(target - leftCount), from: right, to: left, at: leftCount)
            reparentChildren(of: left, leftCount..<target)
            shiftCounts(in: parent, from: rc, to: lc, rows: moved.rows, checked: moved.checked)
        }
    }

    // MARK: Helpers

    /// Positions of `node` and a neighbour under `parent`, left one first
    /// (the right neighbour when there is one). `parent` has two children
    /// or more.
    private func neighbours(of node: Int, in parent: Int) -> (Int, Int) {
        let c = inner.index(of: node, in: parent)
        return c + 1 < inner.size[parent] ? (c, c + 1) : (c - 1, c)
    }

    /// Points the children at `positions` of inner node `node` back at it.
    private mutating func reparentChildren(of node: Int, _ positions: Range<Int>) {
        let level = inner.level[node] - 1
        let b = inner.base(node)
        for k in positions {
            setParent(of: inner.child[b + k], level: level, to: node)
        }
    }

    private mutating func shiftCounts(in parent: Int, from: Int, to: Int, rows: Int, checked: Int) {
        let b = inner.base(parent)
        inner.rows[b + from] -= rows
        inner.checked[b + from] -= checked
        inner.rows[b + to] += rows
        inner.checked[b + to] += checked
    }
}
