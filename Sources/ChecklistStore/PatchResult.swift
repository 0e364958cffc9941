import ChecklistModel

/// What an accepted PATCH did.
public struct PatchResult: Hashable, Sendable {
    /// The id the store gave to an insert that carried a temporary reference.
    public typealias Assignment = TempRefAssignment

    /// The list's revision after the patch (one more than before).
    public var revision: Revision
    /// One entry per insert with a temporary reference, in operation order.
    public var ids: [Assignment]
    /// The operations as applied (the same as the committed `Change`).
    public var applied: [AppliedOperation]
    /// The list after the patch.
    public var summary: ListSummary
    /// True when this is the remembered answer to a retry (same idempotency
    /// key): nothing was applied now, `applied` is empty and `summary` is the
    /// list as it is now (if it was deleted since: the answer's revision, an
    /// empty name and zero counts).
    public var isRepeat: Bool

    public init(revision: Revision, ids: [Assignment], applied: [AppliedOperation], summary: ListSummary,
                isRepeat: Bool = false) {
        self.revision = revision
        self.ids = ids
        self.applied = applied
        self.summary = summary
        self.isRepeat = isRepeat
    }
}
