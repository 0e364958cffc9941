import ChecklistModel

// A full consistency check of the tree, for tests: O(n).
extension RowTree {
    /// Describes the first broken invariant, or returns nil when the tree is
    /// consistent: balance, fill, counts, parent links, leaf columns and the
    /// id locator. Only nodes on the rightmost path may be under half full
    /// (appending starts a new last node rather than splitting in halves).
    func invariantViolation() -> String? {
        var rows = 0
        var checked = 0
        var text = 0
        var seenIDs = 0
        var problem: String?

        func fail(_ message: String) {
            if problem == nil { problem = message }
        }

        func checkLeaf(_ l: Int, parent: Int, rightmost: Bool) {
            let leaf = leaves[l]
            if leaf.parent != parent { fail("leaf \(l): parent \(leaf.parent), expected \(parent)") }
            if leaf.count > leafCapacity { fail("leaf \(l): \(leaf.count) rows over capacity") }
            if !rightmost, leaf.count < minLeafCount { fail("leaf \(l): \(leaf.count) rows under minimum") }
            if leaf.flags.count != leaf.count || leaf.textEnds.count != leaf.count { fail("leaf \(l): column lengths differ") }
            if !(leaf.dues.isEmpty || leaf.dues.count == leaf.count) { fail("leaf \(l): dues column length") }
            if !(leaf.prices.isEmpty || leaf.prices.count == leaf.count) { fail("leaf \(l): prices column length") }
            var previous: UInt32 = 0
            for end in leaf.textEnds {
                if end < previous { fail("leaf \(l): text ends decrease") }
                previous = end
            }
            if Int(previous) != leaf.arena.count { fail("leaf \(l): arena has \(leaf.arena.count) bytes, texts end at \(previous)") }
            let leafChecked = leaf.flags.filter { $0 & ItemFlags.checked.rawValue != 0 }.count
            if leafChecked != leaf.checkedCount { fail("leaf \(l): checkedCount \(leaf.checkedCount), flags say \(leafChecked)") }
            for (slot, flag) in leaf.flags.enumerated() {
                if flag & ItemFlags.hasDue.rawValue != 0, leaf.dues.isEmpty { fail("leaf \(l) slot \(slot): due without column") }
                if flag & ItemFlags.hasPrice.rawValue != 0, leaf.prices.isEmpty { fail("leaf \(l) slot \(slot): price without column") }
            }
            for id in leaf.ids where locator.leaf(of: id) != l {
                fail("id \(id): locator says \(String(describing: locator.leaf(of: id))), lives in leaf \(l)")
            }
            rows += leaf.count
            checked += leaf.checkedCount
            text += leaf.arena.count
            seenIDs += leaf.count
        }

        /// Returns (rows, checked) of the subtree.
        func checkInner(_ n: Int, parent: Int, level: Int, isRoot: Bool, rightmost: Bool) -> (Int, Int) {
            if inner.isFree(n) { fail("inner \(n): reachable but free") }
            if inner.parent[n] != parent { fail("inner \(n): parent \(inner.parent[n]), expected \(parent)") }
            if inner.level[n] != level { fail("inner \(n): level \(inner.level[n]), expected \(level)") }
            let k = inner.size[n]
            if k > innerCapacity { fail("inner \(n): \(k) children over capacity") }
            if isRoot ? k < 2 : (k < 1 || !rightmost && k < minInnerCount) { fail("inner \(n): \(k) children under minimum") }
            var total = (0, 0)
            for (i, child) in inner.children(of: n).enumerated() {
                let sub: (Int, Int)
                if level == 1 {
                    if freeLeaves.contains(child) { fail("leaf \(child): reachable but free") }
                    let before = (rows, checked)
                    checkLeaf(child, parent: n, rightmost: rightmost && i == k - 1)
                    sub = (rows - before.0, checked - before.1)
                } else {
                    sub = checkInner(child, parent: n, level: level - 1, isRoot: false, rightmost: rightmost && i == k - 1)
                }
                let b = inner.base(n)
                if sub.0 != inner.rows[b + i] { fail("inner \(n) child \(i): count \(inner.rows[b + i]), subtree has \(sub.0)") }
                if sub.1 != inner.checked[b + i] { fail("inner \(n) child \(i): checked \(inner.checked[b + i]), subtree has \(sub.1)") }
                total.0 += sub.0
                total.1 += sub.1
            }
            return total
        }

        if height == 0 {
            checkLeaf(root, parent: -1, rightmost: true)
        } else {
            _ = checkInner(root, parent: -1, level: height, isRoot: true, rightmost: true)
        }
        // The leaf chain visits the leaves in tree order.
        var chain = height == 0 ? root : firstLeaf()
        var previous = -1
        for expected in leafOrder() {
            if chain != expected { fail("leaf chain: after \(previous) comes \(chain), expected \(expected)"); break }
            previous = chain
            chain = leaves[chain].next
        }
        if problem == nil, chain != -1 { fail("leaf chain: last leaf \(previous) links to \(chain)") }
        if rows != count { fail("count \(count), leaves hold \(rows)") }
        if text != textBytes { fail("textBytes \(textBytes), leaves hold \(text)") }
        if checked != checkedCount { fail("checkedCount \(checkedCount), leaves hold \(checked)") }
        if locator.count != seenIDs { fail("locator maps \(locator.count) ids, tree holds \(seenIDs)") }
        if locator.allEntries().count != locator.count { fail("locator count out of step with its pages") }
        return problem
    }

    private func firstLeaf() -> Int {
        var node = root
        for _ in 0..<height { node = inner.child[inner.base(node)] }
        return node
    }

    /// The leaves in tree order, by a full traversal.
    private func leafOrder() -> [Int] {
        var out: [Int] = []
        func walk(_ node: Int, _ level: Int) {
            if level == 0 { out.append(node); return }
            for child in inner.children(of: node) { walk(child, level - 1) }
        }
        walk(root, height)
        return out
    }
}
