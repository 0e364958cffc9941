import ChecklistModel

/// Fills one `RowLeaf` row by row, in list order, for the builders of whole
/// lists (`RowTreeBuilder`, `RowBatchBuilder`): each row is copied once into
/// the leaf's columns, its text into an arena that `take()` copies at its
/// exact size. Knows nothing of ids elsewhere in the list (no locator).
struct LeafFiller: Sendable {
    /// Rows a leaf holds when full.
    let capacity: Int
    private var leaf = RowLeaf()
    private var arena: [UInt8] = []

    init(capacity: Int) {
        self.capacity = capacity
        arena.reserveCapacity(capacity * 64)
        start()
    }

    /// Rows in the leaf being filled.
    var count: Int { leaf.count }
    var isFull: Bool { leaf.count == capacity }

    /// Appends `row` (the caller takes the leaf once it is full).
    mutating func append(_ row: ImportedItems.View) {
        var f: UInt8 = 0
        if row.checked { f |= ItemFlags.checked.rawValue; leaf.checkedCount += 1 }
        if row.remind { f |= ItemFlags.remind.rawValue }
        let slot = leaf.ids.count
        if row.due != nil { f |= ItemFlags.hasDue.rawValue }
        if row.price != nil { f |= ItemFlags.hasPrice.rawValue }
        Self.append(row.due, to: &leaf.dues, at: slot, capacity: capacity)
        Self.append(row.price, to: &leaf.prices, at: slot, capacity: capacity)
        leaf.ids.append(row.id.rawValue)
        leaf.flags.append(f)
        arena.append(contentsOf: row.text)
        precondition(arena.count <= Int(UInt32.max), "RowLeaf: text arena over 4 GiB")
        leaf.textEnds.append(UInt32(arena.count))
    }

    /// The leaf filled so far, its arena copied at its exact size; filling
    /// starts on a new, empty leaf.
    mutating func take() -> RowLeaf {
        leaf.arena = [UInt8](unsafeUninitializedCapacity: arena.count) { buffer, initialized in
            _ = buffer.initialize(fromContentsOf: arena)
            initialized = arena.count
        }
        arena.removeAll(keepingCapacity: true)
        defer { start() }
        return leaf
    }

    /// Continues filling `partial` (empty filler only): its rows count as
    /// appended here.
    mutating func load(_ partial: RowLeaf) {
        precondition(leaf.count == 0, "LeafFiller: load into a leaf being filled")
        leaf = partial
        arena.removeAll(keepingCapacity: true)
        arena.append(contentsOf: partial.arena)
        leaf.arena = []
        leaf.ids.reserveCapacity(capacity)
        leaf.flags.reserveCapacity(capacity)
        leaf.textEnds.reserveCapacity(capacity)
    }

    /// Releases the arena's spare room (once the last leaf was taken).
    mutating func release() { arena = [] }

    private mutating func start() {
        leaf = RowLeaf()
        leaf.ids.reserveCapacity(capacity)
        leaf.flags.reserveCapacity(capacity)
        leaf.textEnds.reserveCapacity(capacity)
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

extension RowLeaf {
    /// Lends row `slot` as a view (its text valid during the call).
    func withView<T>(_ slot: Int, _ body: (ImportedItems.View) -> T) -> T {
        let f = flags[slot]
        let range = textStart(slot)..<Int(textEnds[slot])
        return arena.withUnsafeBytes { text in
            body(ImportedItems.View(id: ItemID(ids[slot]), checked: f & ItemFlags.checked.rawValue != 0,
                                    remind: f & ItemFlags.remind.rawValue != 0,
                                    due: f & ItemFlags.hasDue.rawValue != 0 ? dues[slot] : nil,
                                    price: f & ItemFlags.hasPrice.rawValue != 0 ? prices[slot] : nil,
                                    text: UnsafeRawBufferPointer(rebasing: text[range])))
        }
    }
}
