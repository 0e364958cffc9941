import ChecklistModel

/// What an accepted PATCH did.
public struct PatchResult: Hashable, Sendable {
    /// The id the store gave to an insert that carried a temporary reference.
    public struct Assignment: Hashable, Sendable {
        public var tempRef: UInt64
        public var id: ItemID

        public init(tempRef: UInt64, id: ItemID) {
            self.tempRef = tempRef
            self.id = id
        }
    }

    /// The list's revision after the patch (one more than before).
    public var revision: Revision
    /// One entry per insert with a temporary reference, in operation order.
    public var ids: [Assignment]
    /// The operations as applied (the same as the committed `Change`).
    public var applied: [AppliedOperation]
    /// The list after the patch.
    public var summary: ListSummary

    public init(revision: Revision, ids: [Assignment], applied: [AppliedOperation], summary: ListSummary) {
        self.revision = revision
        self.ids = ids
        self.applied = applied
        self.summary = summary
    }
}
