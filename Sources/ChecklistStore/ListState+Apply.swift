import ChecklistModel

// Applying resolved operations to a list: the part of the apply path that
// live patches and replayed changes share. Each operation is checked against
// the list as it stands (ids present, indexes in range) and recorded in the
// undo log once applied.
extension ListState {
    /// Applies `ops` all or nothing: on the first failing operation every
    /// earlier one is undone and the error is thrown.
    mutating func apply(_ ops: [AppliedOperation]) throws(ChecklistError) {
        var undo = UndoLog()
        do throws(ChecklistError) {
            for op in ops { try apply(op, undo: &undo) }
        } catch {
            rollBack(undo)
            throw error
        }
    }

    /// Applies one resolved operation and records how to undo it.
    ///
    /// `op` is borrowed: an insert's fields go into the leaf without a copy
    /// of the operation first.
    mutating func apply(_ op: borrowing AppliedOperation, undo: inout UndoLog) throws(ChecklistError) {
        switch op {
        case .insert(let id, let index, let fields):
            guard id.rawValue != 0, id.rawValue >= nextItemID, id.rawValue < UInt64.max else {
                throw .badField("id", "item id \(id) was already used in list \(self.id)")
            }
            guard index <= UInt64(rows.count) else { throw Self.badIndex(index, count: rows.count) }
            if let key = fields.clientKey { try keys.checkFree(key, for: id, in: self.id) }
            rows.insert(id: id, fields: fields, at: Int(index))
            undo.record(.inserted(id, nextItemID: nextItemID))
            nextItemID = id.rawValue + 1
            if let key = fields.clientKey { keys.set(key, for: id) }
        case .setText(let id, let text):
            try change(id, .text(text), undo: &undo)
        case .setChecked(let id, let checked):
            try change(id, .checked(checked), undo: &undo)
        case .setDue(let id, let due):
            try change(id, .due(due), undo: &undo)
        case .setRemind(let id, let remind):
            try change(id, .remind(remind), undo: &undo)
        case .setPrice(let id, let price):
            try change(id, .price(price), undo: &undo)
        case .setKey(let id, let key):
            guard rows.contains(id) else { throw Self.itemNotFound(id) }
            if let key { try keys.checkFree(key, for: id, in: self.id) }
            undo.record(.keyChanged(id, keys.set(key, for: id)))
        case .delete(let id):
            guard let (item, index) = rows.remove(id) else { throw Self.itemNotFound(id) }
            undo.record(.deleted(item, index: index))
            if let old = keys.key(of: id) {
                keys.set(nil, for: id)
                undo.record(.keyChanged(id, old))
            }
        case .move(let id, let toIndex):
            guard let from = rows.index(of: id) else { throw Self.itemNotFound(id) }
            guard toIndex < UInt64(rows.count) else { throw Self.badToIndex(toIndex, count: rows.count) }
            rows.move(from: from, to: Int(toIndex))
            undo.record(.moved(id, from: from))
        }
    }

    private mutating func change(_ id: ItemID, _ change: FieldChange, undo: inout UndoLog) throws(ChecklistError) {
        guard let old = rows.apply(change, to: id) else { throw Self.itemNotFound(id) }
        undo.record(.changed(id, old))
    }

    // MARK: Errors shared with patch resolution

    static func itemNotFound(_ id: ItemID) -> ChecklistError {
        .notFound("item \(id) not found")
    }

    static func badIndex(_ index: UInt64, count: Int) -> ChecklistError {
        .badField("index", "index \(index) is past the end of the list (\(count) rows)")
    }

    static func badToIndex(_ index: UInt64, count: Int) -> ChecklistError {
        .badField("toIndex", "toIndex \(index) is out of range (\(count) rows)")
    }
}
