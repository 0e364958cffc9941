import ChecklistModel

// Row edits: insert, remove, move, field changes. Each touches one leaf,
// updates the counts on the path to the root and then restores balance
// (RowTree+Balancing.swift): O(height × fan-out + leaf size).
extension RowTree {
    /// Inserts `item` at `index` (`0...count`). The id must not be present.
    mutating func insert(_ item: Item, at index: Int) {
        insert(id: item.id, fields: item.fields, at: index)
    }

    /// Inserts the row `id` with `fields` at `index` (`0...count`). The id
    /// must not be present.
    mutating func insert(id: ItemID, fields: borrowing ItemFields, at index: Int) {
        var (leaf, slot) = insertionPoint(index)
        if leaves[leaf].count >= leafCapacity {
            // Split before inserting, so that a leaf's columns never grow
            // past `leafCapacity` (growing would double their capacity).
            let appending = index == count
            let at = appending ? leafCapacity : leafCapacity / 2
            let right = splitLeaf(leaf, at: at, appending: appending)
            if slot > at || (appending && slot == at) {
                leaf = right
                slot -= at
            }
        }
        leaves[leaf].insert(id: id.rawValue, fields: fields, at: slot)
        // One locator lookup both checks and maps the id; a duplicate traps
        // (after the leaf changed, which a trap makes moot).
        let added = locator.insertIfAbsent(id.rawValue, leaf: leaf)
        precondition(added, "RowTree: duplicate item id")
        textBytes += fields.text.utf8.count
        propagate(fromLeaf: leaf, rows: 1, checked: fields.checked ? 1 : 0)
    }

    /// Appends `item` after the last row.
    mutating func append(_ item: Item) {
        insert(item, at: count)
    }

    /// Removes and returns the row at `index` (`0..<count`).
    @discardableResult
    mutating func remove(at index: Int) -> Item {
        let (leaf, slot) = findRow(index, filter: .all)
        return removeRow(leaf: leaf, slot: slot)
    }

    /// Removes the row with `id`; returns it and the index it had.
    mutating func remove(_ id: ItemID) -> (item: Item, index: Int)? {
        guard let position = position(of: id), let (leaf, slot) = locate(id) else { return nil }
        return (removeRow(leaf: leaf, slot: slot), position.index)
    }

    /// Moves the row at `from` so that it ends up at `to` (both `0..<count`).
    mutating func move(from: Int, to: Int) {
        precondition(from >= 0 && from < count && to >= 0 && to < count, "move index out of range")
        guard from != to else { return }
        let item = remove(at: from)
        insert(item, at: to)
    }

    /// Changes one field of the row with `id`; returns the previous value,
    /// or nil when there is no such row.
    mutating func apply(_ change: FieldChange, to id: ItemID) -> FieldChange? {
        guard let (leaf, slot) = locate(id) else { return nil }
        let old = leaves[leaf].apply(change, at: slot)
        if case .text(let new) = change, case .text(let was) = old { textBytes += new.utf8.count - was.utf8.count }
        if case .checked(let new) = change, case .checked(let was) = old, new != was {
            propagate(fromLeaf: leaf, rows: 0, checked: new ? 1 : -1)
        }
        return old
    }

    private mutating func removeRow(leaf: Int, slot: Int) -> Item {
        let item = leaves[leaf].remove(at: slot)
        locator.remove(item.id.rawValue)
        textBytes -= item.fields.text.utf8.count
        propagate(fromLeaf: leaf, rows: -1, checked: item.fields.checked ? -1 : 0)
        if leaves[leaf].count < minLeafCount {
            fixLeafUnderflow(leaf)
        }
        return item
    }
}
