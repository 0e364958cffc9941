import ChecklistModel

/// A list as a snapshot holds it, apart from its rows: enough, with the rows
/// in order, to put the list back exactly (`Store.restoreList`).
public struct ExportedList: Hashable, Sendable {
    public var namespace: Namespace
    /// Id, name, icon, revision and counts.
    public var summary: ListSummary
    /// The id the list's next inserted item gets; above every id it ever
    /// gave out, so ids of deleted items are never handed out again.
    public var nextItemID: ItemID

    public init(namespace: Namespace, summary: ListSummary, nextItemID: ItemID) {
        self.namespace = namespace
        self.summary = summary
        self.nextItemID = nextItemID
    }
}
