import ChecklistModel

/// A leaf of the `RowTree`: a run of consecutive rows stored column-wise,
/// with no heap object per row.
///
/// - `ids` holds the rows' ids, as a run while they go up by one (`LeafIDs`).
/// - `flags` and `textEnds` hold one entry per row; a row's flags
///   byte is its `ItemFlags` raw value, the same bits as on the wire.
/// - The texts of all rows are concatenated in `arena` (UTF-8); row `i`'s text
///   is `arena[textEnds[i-1] ..< textEnds[i]]` (`0` for the first row).
/// - `dues` and `prices` are empty while no row of the leaf has one; once one
///   does they hold one entry per row (meaningful where the flag bit is set).
///   Most lists use neither, so they cost nothing there.
struct RowLeaf: Sendable {
    /// The inner node holding this leaf, or -1 when the leaf is the root.
    var parent = -1
    /// The next leaf in list order, or -1 for the last leaf.
    var next = -1
    var ids = LeafIDs()
    var flags: [UInt8] = []
    var textEnds: [UInt32] = []
    var arena: [UInt8] = []
    var dues: [Int64] = []
    var prices: [Int64] = []
    /// Number of rows with the checked bit.
    var checkedCount = 0

    var count: Int { ids.count }

    /// The first byte of row `slot`'s text in `arena` (`slot` may be `count`).
    @inline(__always)
    func textStart(_ slot: Int) -> Int {
        slot == 0 ? 0 : Int(textEnds[slot &- 1])
    }

    /// Linear scan for `id`; leaves are small, the scan is over 8-byte integers.
    func slot(of id: UInt64) -> Int? {
        ids.firstIndex(of: id)
    }

    /// Number of rows `filter` matches.
    func count(_ filter: RowFilter) -> Int {
        switch filter {
        case .all: return ids.count
        case .checked: return checkedCount
        case .unchecked: return ids.count - checkedCount
        }
    }

    func isChecked(_ slot: Int) -> Bool {
        flags[slot] & ItemFlags.checked.rawValue != 0
    }

    // MARK: Reading

    func text(at slot: Int) -> String {
        let range = textStart(slot)..<Int(textEnds[slot])
        return arena.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }

    func fields(at slot: Int) -> ItemFields {
        let f = flags[slot]
        return ItemFields(
            text: text(at: slot),
            checked: f & ItemFlags.checked.rawValue != 0,
            due: f & ItemFlags.hasDue.rawValue != 0 ? dues[slot] : nil,
            remind: f & ItemFlags.remind.rawValue != 0,
            price: f & ItemFlags.hasPrice.rawValue != 0 ? prices[slot] : nil)
    }

    func item(at slot: Int) -> Item {
        Item(id: ItemID(ids[slot]), fields: fields(at: slot))
    }

    // MARK: Single rows

    /// Inserts one row at `slot` (`0...count`).
    mutating func insert(id: UInt64, fields: borrowing ItemFields, at slot: Int) {
        let f = ItemFlags(checked: fields.checked, remind: fields.remind, due: fields.due, price: fields.price).rawValue
        let start = textStart(slot)
        // After the last row (the usual case) the columns are appended to,
        // without the generic shifting insert and with no ends to move.
        let appending = slot == ids.count
        let byteCount = Self.withUTF8(fields.text) { bytes in
            precondition(arena.count + bytes.count <= Int(UInt32.max), "RowLeaf: text arena over 4 GiB")
            reserveArena(adding: bytes.count)
            if appending { arena.append(contentsOf: bytes) } else { arena.insert(contentsOf: bytes, at: start) }
            return bytes.count
        }
        ids.insert(id, at: slot)
        if appending {
            flags.append(f)
            textEnds.append(UInt32(start + byteCount))
        } else {
            flags.insert(f, at: slot)
            textEnds.insert(UInt32(start + byteCount), at: slot)
            shiftTextEnds(from: slot + 1, by: byteCount)
        }
        Self.insert(fields.due, into: &dues, at: slot, rowCount: ids.count)
        Self.insert(fields.price, into: &prices, at: slot, rowCount: ids.count)
        if fields.checked { checkedCount += 1 }
    }

    /// Removes the row at `slot` and returns it.
    mutating func remove(at slot: Int) -> Item {
        let removed = item(at: slot)
        let range = textStart(slot)..<Int(textEnds[slot])
        arena.removeSubrange(range)
        ids.remove(at: slot)
        if flags.remove(at: slot) & ItemFlags.checked.rawValue != 0 { checkedCount -= 1 }
        textEnds.remove(at: slot)
        shiftTextEnds(from: slot, by: -range.count)
        if !dues.isEmpty { dues.remove(at: slot) }
        if !prices.isEmpty { prices.remove(at: slot) }
        return removed
    }

    /// Sets one field of row `slot`; returns the previous value as a change.
    mutating func apply(_ change: FieldChange, at slot: Int) -> FieldChange {
        switch change {
        case .text(var newText):
            let range = textStart(slot)..<Int(textEnds[slot])
            let old = text(at: slot)
            let delta = newText.withUTF8 { bytes in
                reserveArena(adding: bytes.count - range.count)
                arena.replaceSubrange(range, with: bytes)
                return bytes.count - range.count
            }
            shiftTextEnds(from: slot, by: delta)
            return .text(old)
        case .checked(let value):
            let old = setFlag(ItemFlags.checked.rawValue, value, at: slot)
            if old != value { checkedCount += value ? 1 : -1 }
            return .checked(old)
        case .remind(let value):
            return .remind(setFlag(ItemFlags.remind.rawValue, value, at: slot))
        case .due(let value):
            let old = flags[slot] & ItemFlags.hasDue.rawValue != 0 ? dues[slot] : nil
            _ = setFlag(ItemFlags.hasDue.rawValue, value != nil, at: slot)
            Self.set(value, in: &dues, at: slot, rowCount: ids.count)
            return .due(old)
        case .price(let value):
            let old = flags[slot] & ItemFlags.hasPrice.rawValue != 0 ? prices[slot] : nil
            _ = setFlag(ItemFlags.hasPrice.rawValue, value != nil, at: slot)
            Self.set(value, in: &prices, at: slot, rowCount: ids.count)
            return .price(old)
        }
    }

    // MARK: Runs of rows (splits, merges, redistribution)

    /// Removes the rows in `range` and returns them as a new leaf (no parent).
    mutating func extract(_ range: Range<Int>) -> RowLeaf {
        var out = RowLeaf()
        let bytes = textStart(range.lowerBound)..<textStart(range.upperBound)
        out.ids = ids.extracting(range)
        out.flags = Array(flags[range])
        out.arena = Array(arena[bytes])
        let base = UInt32(bytes.lowerBound)
        out.textEnds = textEnds[range].map { $0 &- base }
        if !dues.isEmpty { out.dues = Array(dues[range]) }
        if !prices.isEmpty { out.prices = Array(prices[range]) }
        out.checkedCount = out.flags.reduce(0) { $0 + Int($1 & ItemFlags.checked.rawValue) }
        out.dropUnusedColumns()

        ids.removeSubrange(range)
        flags.removeSubrange(range)
        arena.removeSubrange(bytes)
        textEnds.removeSubrange(range)
        shiftTextEnds(from: range.lowerBound, by: -bytes.count)
        if !dues.isEmpty { dues.removeSubrange(range) }
        if !prices.isEmpty { prices.removeSubrange(range) }
        checkedCount -= out.checkedCount
        dropUnusedColumns()
        return out
    }

    /// Inserts all rows of `other` at `slot`.
    mutating func insert(contentsOf other: RowLeaf, at slot: Int) {
        let start = textStart(slot)
        let oldCount = count
        reserveArena(adding: other.arena.count)
        arena.insert(contentsOf: other.arena, at: start)
        ids.insert(contentsOf: other.ids, at: slot)
        flags.insert(contentsOf: other.flags, at: slot)
        let base = UInt32(start)
        textEnds.insert(contentsOf: other.textEnds.lazy.map { $0 &+ base }, at: slot)
        shiftTextEnds(from: slot + other.count, by: other.arena.count)
        Self.insert(contentsOf: other.dues, into: &dues, at: slot, oldCount: oldCount, added: other.count)
        Self.insert(contentsOf: other.prices, into: &prices, at: slot, oldCount: oldCount, added: other.count)
        checkedCount += other.checkedCount
    }

    /// Makes room at once for as many rows and text bytes as `full` holds:
    /// a leaf that rows are appended to (`RowTree.splitLeaf`, appending)
    /// fills up like the leaf before it, so growing its columns step by
    /// step would copy them many times (its text arena nine times, growing
    /// a quarter at a time), and trimming it when it is full copies them
    /// once more.
    mutating func reserveCapacity(like full: borrowing RowLeaf) {
        flags.reserveCapacity(full.count)
        textEnds.reserveCapacity(full.count)
        arena.reserveCapacity(full.arena.count)
    }

    /// Drops unused capacity of the columns (a leaf that is not expected to
    /// grow again).
    mutating func trimCapacity() {
        ids.trimCapacity()
        Self.trim(&flags)
        Self.trim(&textEnds)
        Self.trim(&arena)
        Self.trim(&dues)
        Self.trim(&prices)
    }

    // MARK: Helpers

    /// Copies `array` to a buffer of its size, unless at most 64 bytes are
    /// unused (the allocator's rounding, a leaf reserved for appending
    /// that filled as expected): not worth a copy.
    private static func trim<T: BitwiseCopyable>(_ array: inout [T]) {
        guard (array.capacity - array.count) * MemoryLayout<T>.stride > 64 else { return }
        array = [T](unsafeUninitializedCapacity: array.count) { buffer, initialized in
            _ = buffer.initialize(fromContentsOf: array)
            initialized = array.count
        }
    }

    /// Lends `text`'s UTF-8 bytes to `body`: in place for a native string
    /// (no copy of the string, no retain), else from a contiguous copy.
    private static func withUTF8<R>(_ text: borrowing String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        var contiguous = copy text
        return contiguous.withUTF8(body)
    }

    /// Grows the arena by 1/4 rather than doubling: leaves are many, and
    /// doubling would leave a third of all text bytes unused on average.
    private mutating func reserveArena(adding extra: Int) {
        let needed = arena.count + extra
        if needed > arena.capacity {
            arena.reserveCapacity(Swift.max(needed, arena.capacity + arena.capacity / 4))
        }
    }

    private mutating func shiftTextEnds(from slot: Int, by delta: Int) {
        guard delta != 0, slot < textEnds.count else { return }
        let d = UInt32(truncatingIfNeeded: delta)
        textEnds.withUnsafeMutableBufferPointer { ends in
            for i in slot..<ends.count { ends[i] &+= d }
        }
    }

    private mutating func setFlag(_ bit: UInt8, _ value: Bool, at slot: Int) -> Bool {
        let old = flags[slot] & bit != 0
        if value { flags[slot] |= bit } else { flags[slot] &= ~bit }
        return old
    }

    /// Frees `dues`/`prices` when no row uses them any more.
    private mutating func dropUnusedColumns() {
        if !dues.isEmpty, !flags.contains(where: { $0 & ItemFlags.hasDue.rawValue != 0 }) { dues = [] }
        if !prices.isEmpty, !flags.contains(where: { $0 & ItemFlags.hasPrice.rawValue != 0 }) { prices = [] }
    }

    /// Inserts into an optional column; `rowCount` already includes the new row.
    private static func insert(_ value: Int64?, into column: inout [Int64], at slot: Int, rowCount: Int) {
        if column.isEmpty {
            guard let value else { return }
            column = Array(repeating: 0, count: rowCount)
            column[slot] = value
        } else {
            column.insert(value ?? 0, at: slot)
        }
    }

    private static func set(_ value: Int64?, in column: inout [Int64], at slot: Int, rowCount: Int) {
        if column.isEmpty {
            guard let value else { return }
            column = Array(repeating: 0, count: rowCount)
            column[slot] = value
        } else {
            column[slot] = value ?? 0
        }
    }

    private static func insert(contentsOf values: [Int64], into column: inout [Int64], at slot: Int, oldCount: Int, added: Int) {
        if values.isEmpty {
            if !column.isEmpty { column.insert(contentsOf: repeatElement(0, count: added), at: slot) }
        } else {
            if column.isEmpty { column = Array(repeating: 0, count: oldCount) }
            column.insert(contentsOf: values, at: slot)
        }
    }
}

/// A change of one field of a row. Applying a change yields the previous value
/// as a change of the same kind, which is what the undo log keeps.
enum FieldChange: Hashable, Sendable {
    case text(String)
    case checked(Bool)
    case remind(Bool)
    case due(Int64?)
    case price(Int64?)
}
