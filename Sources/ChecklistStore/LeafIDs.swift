/// The item ids of a `RowLeaf`, in row order: while they go up by exactly
/// one from row to row, as a run (`first` and a count, no storage); else
/// one `UInt64` per row.
///
/// A list's ids come from its counter, one after another, so a list that
/// was loaded, restored or appended to holds long runs: as a run, a leaf's
/// 128 ids cost 16 bytes instead of 1 KiB, 8 bytes a row less. The first
/// edit that breaks the run (an insert in the middle, a removal that is
/// not at either end, ids from a move) spells the ids out until the leaf
/// is emptied; the ids split off it become a run again when they are one.
struct LeafIDs: RandomAccessCollection, Sendable {
    /// The first id of the run (when `spelled` is empty).
    private var first: UInt64 = 0
    /// Number of ids of the run (when `spelled` is empty).
    private var runCount = 0
    /// Every id, once the run is broken; empty while it holds.
    private var spelled: [UInt64] = []

    init() {}

    init<S: Sequence<UInt64>>(_ ids: S) {
        for id in ids { append(id) }
    }

    var startIndex: Int { 0 }
    var endIndex: Int { spelled.isEmpty ? runCount : spelled.count }

    /// Whether the ids are held as a run (no storage).
    var isRun: Bool { spelled.isEmpty }

    /// Storage capacity in ids (0 for a run).
    var capacity: Int { spelled.capacity }

    @inline(__always)
    subscript(slot: Int) -> UInt64 {
        spelled.isEmpty ? first &+ UInt64(truncatingIfNeeded: slot) : spelled[slot]
    }

    /// Lends the spelled-out ids (empty while they are a run) and the run's
    /// first id to `body`, for loops that read ids without a call per row.
    @inline(__always)
    func withSpelledIDs<T>(_ body: (UnsafeBufferPointer<UInt64>, UInt64) -> T) -> T {
        spelled.withUnsafeBufferPointer { body($0, first) }
    }

    /// The slot of `id`, if the leaf holds it.
    func firstIndex(of id: UInt64) -> Int? {
        guard spelled.isEmpty else { return spelled.firstIndex(of: id) }
        guard id >= first, id &- first < UInt64(runCount) else { return nil }
        return Int(id &- first)
    }

    /// The first slot whose id is not in `range`, if any: O(1) for a run.
    func firstIndexOutside(_ range: Range<UInt64>) -> Int? {
        guard spelled.isEmpty else { return spelled.firstIndex { !range.contains($0) } }
        guard runCount > 0 else { return nil }
        if !range.contains(first) { return 0 }
        let last = first &+ UInt64(runCount - 1)
        if last >= first, range.contains(last) { return nil }
        // The run leaves the range (or wraps) past its end.
        return Int(range.upperBound &- first)
    }

    mutating func reserveCapacity(_ n: Int) {
        if !spelled.isEmpty { spelled.reserveCapacity(n) }
    }

    mutating func append(_ id: UInt64) {
        insert(id, at: count)
    }

    mutating func insert(_ id: UInt64, at slot: Int) {
        if spelled.isEmpty {
            if runCount == 0 {
                first = id
                runCount = 1
                return
            }
            if slot == runCount, id == first &+ UInt64(runCount), id != 0 {
                runCount += 1
                return
            }
            if slot == 0, first > 1, id == first &- 1 {
                first = id
                runCount += 1
                return
            }
            spellOut()
        }
        spelled.insert(id, at: slot)
    }

    @discardableResult
    mutating func remove(at slot: Int) -> UInt64 {
        let id = self[slot]
        removeSubrange(slot..<(slot + 1))
        return id
    }

    mutating func removeSubrange(_ range: Range<Int>) {
        guard !range.isEmpty else { return }
        if spelled.isEmpty {
            precondition(range.lowerBound >= 0 && range.upperBound <= runCount, "LeafIDs: range out of bounds")
            if range.upperBound == runCount {
                runCount = range.lowerBound
                return
            }
            if range.lowerBound == 0 {
                first &+= UInt64(range.count)
                runCount -= range.count
                return
            }
            spellOut()
        }
        spelled.removeSubrange(range)
        if spelled.isEmpty {
            runCount = 0
        }
    }

    mutating func insert(contentsOf other: LeafIDs, at slot: Int) {
        guard !other.isEmpty else { return }
        if spelled.isEmpty && other.spelled.isEmpty {
            if runCount == 0 {
                self = other
                return
            }
            if slot == runCount, other.first == first &+ UInt64(runCount) {
                runCount += other.runCount
                return
            }
            if slot == 0, other.first &+ UInt64(other.runCount) == first {
                first = other.first
                runCount += other.runCount
                return
            }
        }
        if spelled.isEmpty { spellOut() }
        spelled.insert(contentsOf: other, at: slot)
    }

    /// The ids of `range` as ids of their own.
    func extracting(_ range: Range<Int>) -> LeafIDs {
        var out = LeafIDs()
        if spelled.isEmpty {
            guard !range.isEmpty else { return out }
            out.first = first &+ UInt64(range.lowerBound)
            out.runCount = range.count
        } else {
            out = LeafIDs(spelled[range])
        }
        return out
    }

    /// Drops unused capacity.
    mutating func trimCapacity() {
        guard spelled.capacity > spelled.count else { return }
        spelled = [UInt64](unsafeUninitializedCapacity: spelled.count) { buffer, initialized in
            initialized = buffer.initialize(fromContentsOf: spelled)
        }
    }

    private mutating func spellOut() {
        var ids = [UInt64]()
        ids.reserveCapacity(runCount + 1)
        for i in 0..<runCount { ids.append(first &+ UInt64(i)) }
        spelled = ids
        runCount = 0
    }
}
