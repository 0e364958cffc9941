/// Names an item inside a patch: an existing item by id, or an item inserted
/// earlier in the same batch by the client-chosen temporary reference.
public enum ItemRef: Hashable, Sendable {
    case id(ItemID)
    case temp(UInt64)
}

/// Where an insert puts the new item.
public enum InsertPosition: Hashable, Sendable {
    /// At this index among all rows (0 = first); `index == count` appends.
    case index(UInt64)
    /// Directly after this item.
    case after(ItemRef)
    /// After the last row.
    case end
}

/// One operation of a PATCH batch, as a client sends it.
public enum PatchOperation: Hashable, Sendable {
    /// Insert a new item; `tempRef` (non-zero) lets later operations of the
    /// same batch name it, and the answer maps it to the new item's id.
    case insert(tempRef: UInt64?, position: InsertPosition, fields: ItemFields)
    case setText(ItemRef, String)
    case setChecked(ItemRef, Bool)
    case toggle(ItemRef)
    case setDue(ItemRef, Int64?)
    case setRemind(ItemRef, Bool)
    case setPrice(ItemRef, Int64?)
    /// Set (or, with nil, clear) the item's client key.
    case setKey(ItemRef, String?)
    case delete(ItemRef)
    /// Move the item so that it ends at `toIndex` among all rows.
    case move(ItemRef, toIndex: UInt64)
}

/// An operation as it was applied: every reference resolved to an item id,
/// every position to an index, toggles to their outcome. Replaying resolved
/// operations in order reproduces a list exactly, so they are what the log
/// stores, what subscribers are pushed and what CHANGES_SINCE answers.
public enum AppliedOperation: Hashable, Sendable {
    case insert(id: ItemID, index: UInt64, fields: ItemFields)
    case setText(ItemID, String)
    case setChecked(ItemID, Bool)
    case setDue(ItemID, Int64?)
    case setRemind(ItemID, Bool)
    case setPrice(ItemID, Int64?)
    case setKey(ItemID, String?)
    case delete(ItemID)
    case move(ItemID, toIndex: UInt64)
}
