/// Where a page of rows starts (GET_PAGE's `startKind` and `start`).
public enum PageStart: Hashable, Sendable {
    /// At this index among the rows matching the page's filter.
    case offset(UInt64)
    /// At this item's current position: its index among the matching rows,
    /// or, if it does not match the filter, the index of the first matching
    /// row after it. The item must be in the list.
    case anchor(ItemID)
    /// At the position of the item with this client key, exactly like
    /// `anchor`. The key must be in the list.
    case key(String)
}
