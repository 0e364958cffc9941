import ChecklistModel

/// What it takes to take back the operations of a batch that failed part
/// way: one step per applied operation, undone in reverse order. Cheaper
/// than copying a list that may hold millions of rows, and exact: the rows
/// end in the same order with the same contents (the tree's shape may
/// differ, which nothing can observe).
struct UndoLog {
    enum Step {
        /// An item was inserted; `nextItemID` was the list's counter before.
        case inserted(ItemID, nextItemID: UInt64)
        /// An item was removed from `index`.
        case deleted(Item, index: Int)
        /// An item was moved away from `from`.
        case moved(ItemID, from: Int)
        /// A field was changed; this change puts it back.
        case changed(ItemID, FieldChange)
        /// An item's client key was set, cleared or dropped with the item;
        /// this was the key before.
        case keyChanged(ItemID, String?)
    }

    private(set) var steps: [Step] = []

    var isEmpty: Bool { steps.isEmpty }

    mutating func record(_ step: Step) {
        steps.append(step)
    }

    /// Forgets every step, keeping the capacity (a log reused from patch
    /// to patch: `StoreState.undoScratch`).
    mutating func removeAll() {
        // One `removeLast` a step: `removeAll(keepingCapacity:)` goes through
        // a generic `replaceSubrange` that costs more than the usual one step.
        while steps.popLast() != nil {}
    }
}

extension ListState {
    /// Undoes `log`, newest step first.
    mutating func rollBack(_ log: UndoLog) {
        for step in log.steps.reversed() {
            switch step {
            case .inserted(let id, let nextItemID):
                _ = rows.remove(id)
                self.nextItemID = nextItemID
                keys.set(nil, for: id)
            case .deleted(let item, let index):
                rows.insert(item, at: index)
            case .moved(let id, let from):
                if let now = rows.index(of: id) { rows.move(from: now, to: from) }
            case .changed(let id, let change):
                _ = rows.apply(change, to: id)
            case .keyChanged(let id, let key):
                keys.set(key, for: id)
            }
        }
    }
}
