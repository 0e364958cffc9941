/// Maps an item id to the leaf of the `RowTree` that holds it.
///
/// Item ids are handed out by a per-list counter, so the ids alive in a list
/// are mostly dense. The locator exploits that: ids are grouped in pages of
/// 256 consecutive ids, and a page is either
/// - dense: 256 `UInt32` leaf numbers (1 KiB, 4 bytes per id), or
/// - sparse: a short unsorted array of `(low byte, leaf)` entries, used while
///   the page holds few live ids (after heavy deletion, or for scattered ids
///   from a restored or imported list), so scattered ids cost ~8 bytes each
///   plus the page, never 1 KiB each.
/// A page switches to dense above `sparseMax` live ids and back below
/// `denseMin` (hysteresis, so a page at the border does not flip on every op).
///
/// Compared with `[ItemID: UInt32]` (about 21 bytes per entry at Swift's
/// average load factor) this costs ~4 bytes per item for dense ids.
struct ItemLocator: Sendable {
    static let pageShift: UInt64 = 8
    static let pageSize = 1 << pageShift
    static let sparseMax = 32
    static let denseMin = 8
    private static let absent = UInt32.max

    private struct Page: Sendable {
        /// `pageSize` slots when dense, else empty.
        var dense: [UInt32] = []
        /// `low << 32 | leaf` entries when sparse.
        var sparse: [UInt64] = []
        var live = 0
    }

    private var pages: [UInt64: Page] = [:]
    /// Number of ids mapped.
    private(set) var count = 0
    /// Where the page changed last is in `pages`: a run of ids in one page
    /// (inserts at the end of a list, a leaf's ids moved by a split) finds
    /// it without hashing. Indices stay valid while no page is added or
    /// removed (and across copies: a copy has the same layout), so every
    /// addition or removal of a page forgets it.
    private var lastPage: (key: UInt64, index: Dictionary<UInt64, Page>.Index)?

    /// The leaf holding `id`, if any.
    func leaf(of id: UInt64) -> Int? {
        guard let page = pages[id >> Self.pageShift] else { return nil }
        let low = id & UInt64(Self.pageSize - 1)
        if !page.dense.isEmpty {
            let leaf = page.dense[Int(low)]
            return leaf == Self.absent ? nil : Int(leaf)
        }
        for entry in page.sparse where entry >> 32 == low {
            return Int(UInt32(truncatingIfNeeded: entry))
        }
        return nil
    }

    /// Maps `id` to `leaf`, adding or updating the entry.
    mutating func set(_ id: UInt64, leaf: Int) {
        precondition(leaf >= 0 && leaf < Int(Self.absent), "leaf number out of range")
        let key = id >> Self.pageShift
        let low = id & UInt64(Self.pageSize - 1)
        let value = UInt32(leaf)
        let added = Self.set(low: low, value: value, in: &pages.values[pageIndex(key)])
        if added { count += 1 }
    }

    /// Maps `id` to `leaf` unless `id` is mapped already; returns whether it
    /// was added. One hash lookup, for building a tree row by row.
    mutating func insertIfAbsent(_ id: UInt64, leaf: Int) -> Bool {
        precondition(leaf >= 0 && leaf < Int(Self.absent), "leaf number out of range")
        let low = id & UInt64(Self.pageSize - 1)
        let added = Self.insertIfAbsent(low: low, value: UInt32(leaf), in: &pages.values[pageIndex(id >> Self.pageShift)])
        if added { count += 1 }
        return added
    }

    /// Where the page `key` is in `pages`, added (empty) when absent.
    private mutating func pageIndex(_ key: UInt64) -> Dictionary<UInt64, Page>.Index {
        if let lastPage, lastPage.key == key { return lastPage.index }
        let index: Dictionary<UInt64, Page>.Index
        if let found = pages.index(forKey: key) {
            index = found
        } else {
            pages[key] = Page()
            index = pages.index(forKey: key)!
        }
        lastPage = (key, index)
        return index
    }

    /// Removes `id`'s entry, if present.
    mutating func remove(_ id: UInt64) {
        let key = id >> Self.pageShift
        guard let index = pages.index(forKey: key) else { return }
        let low = id & UInt64(Self.pageSize - 1)
        let (removed, empty) = Self.remove(low: low, from: &pages.values[index])
        if removed { count -= 1 }
        if empty {
            pages.remove(at: index)
            lastPage = nil
        }
    }

    /// Memory held by the pages, for tests and measurements (approximate:
    /// array headers and dictionary overhead are not counted).
    var payloadBytes: Int {
        pages.values.reduce(0) { $0 + $1.dense.capacity * 4 + $1.sparse.capacity * 8 }
    }

    /// Every mapped `(id, leaf)` pair, for invariant checks in tests.
    func allEntries() -> [(id: UInt64, leaf: Int)] {
        var out: [(id: UInt64, leaf: Int)] = []
        for (key, page) in pages {
            if page.dense.isEmpty {
                for e in page.sparse { out.append((key << Self.pageShift | e >> 32, Int(UInt32(truncatingIfNeeded: e)))) }
            } else {
                for (low, leaf) in page.dense.enumerated() where leaf != Self.absent {
                    out.append((key << Self.pageShift | UInt64(low), Int(leaf)))
                }
            }
        }
        return out
    }

    // MARK: Page operations

    /// Returns whether a new entry was added (rather than updated).
    private static func set(low: UInt64, value: UInt32, in page: inout Page) -> Bool {
        if !page.dense.isEmpty {
            let old = page.dense[Int(low)]
            page.dense[Int(low)] = value
            if old == absent { page.live += 1; return true }
            return false
        }
        let entry = low << 32 | UInt64(value)
        if let i = page.sparse.firstIndex(where: { $0 >> 32 == low }) {
            page.sparse[i] = entry
            return false
        }
        if page.live < sparseMax {
            page.sparse.append(entry)
        } else {
            // Becomes dense.
            var dense = [UInt32](repeating: absent, count: pageSize)
            for e in page.sparse { dense[Int(e >> 32)] = UInt32(truncatingIfNeeded: e) }
            dense[Int(low)] = value
            page.dense = dense
            page.sparse = []
        }
        page.live += 1
        return true
    }

    private static func insertIfAbsent(low: UInt64, value: UInt32, in page: inout Page) -> Bool {
        if !page.dense.isEmpty {
            // Checked and set in place (`set` would look at the slot again).
            guard page.dense[Int(low)] == absent else { return false }
            page.dense[Int(low)] = value
            page.live += 1
            return true
        } else if page.sparse.contains(where: { $0 >> 32 == low }) {
            return false
        }
        return set(low: low, value: value, in: &page)
    }

    /// Returns (removed, page now empty).
    private static func remove(low: UInt64, from page: inout Page) -> (Bool, Bool) {
        if !page.dense.isEmpty {
            guard page.dense[Int(low)] != absent else { return (false, false) }
            page.dense[Int(low)] = absent
            page.live -= 1
            if page.live < denseMin {
                // Becomes sparse.
                var sparse: [UInt64] = []
                sparse.reserveCapacity(page.live)
                for (l, leaf) in page.dense.enumerated() where leaf != absent { sparse.append(UInt64(l) << 32 | UInt64(leaf)) }
                page.sparse = sparse
                page.dense = []
            }
            return (true, page.live == 0)
        }
        guard let i = page.sparse.firstIndex(where: { $0 >> 32 == low }) else { return (false, false) }
        page.sparse.swapAt(i, page.sparse.count - 1)
        page.sparse.removeLast()
        page.live -= 1
        return (true, page.live == 0)
    }
}

// MARK: Whole leaves

extension ItemLocator {
    /// Maps every id of `ids` to `leaf` when none of them is mapped yet (and
    /// none repeats); returns whether it did: nothing changes otherwise. A
    /// run of ids (a restored leaf) costs one lookup per page.
    mutating func insertAllIfAbsent(_ ids: LeafIDs, leaf: Int) -> Bool {
        guard ids.isRun, let first = ids.first else {
            for (n, id) in ids.enumerated() where !insertIfAbsent(id, leaf: leaf) {
                for earlier in ids.prefix(n) { remove(earlier) }
                return false
            }
            return true
        }
        precondition(leaf >= 0 && leaf < Int(Self.absent), "leaf number out of range")
        let end = first &+ UInt64(ids.count)
        guard end > first else { return false }
        var id = first
        while id < end {
            let pageEnd = Self.pageEnd(of: id, before: end)
            if let page = pages[id >> Self.pageShift] {
                for low in (id & Self.lowMask)...((pageEnd &- 1) & Self.lowMask) where Self.holds(low: low, page) { return false }
            }
            id = pageEnd
        }
        id = first
        let value = UInt32(leaf)
        while id < end {
            let key = id >> Self.pageShift
            let pageEnd = Self.pageEnd(of: id, before: end)
            let n = Int(pageEnd &- id)
            // One lookup per page; the page is changed in place.
            Self.fill(low: Int(id & Self.lowMask), count: n, value: value, in: &pages.values[pageIndex(key)])
            id = pageEnd
        }
        count += ids.count
        return true
    }

    /// Maps lows `low ..< low + count` (all absent) to `value`.
    private static func fill(low: Int, count n: Int, value: UInt32, in page: inout Page) {
        if page.dense.isEmpty && page.live + n > sparseMax {
            var dense = [UInt32](repeating: absent, count: pageSize)
            for e in page.sparse { dense[Int(e >> 32)] = UInt32(truncatingIfNeeded: e) }
            page.dense = dense
            page.sparse = []
        }
        if page.dense.isEmpty {
            for one in low..<(low + n) { page.sparse.append(UInt64(one) << 32 | UInt64(value)) }
        } else {
            page.dense.withUnsafeMutableBufferPointer { slots in
                for i in low..<(low + n) { slots[i] = value }
            }
        }
        page.live += n
    }

    /// The end of `id`'s page, or `end` if that comes first.
    private static func pageEnd(of id: UInt64, before end: UInt64) -> UInt64 {
        let next = (id >> pageShift &+ 1) << pageShift
        return next == 0 || next > end ? end : next
    }

    private static var lowMask: UInt64 { UInt64(pageSize - 1) }

    private static func holds(low: UInt64, _ page: Page) -> Bool {
        page.dense.isEmpty ? page.sparse.contains { $0 >> 32 == low } : page.dense[Int(low)] != absent
    }
}
