import ChecklistModel

/// What a PATCH's answer (PATCH_OK) reports of it: its revision, the ids
/// given to its inserts' temporary references, and whether it is the
/// remembered answer to a retry. What the batch paths
/// (`Store.patch(in:batch:into:)`, `Store.patch(batches:into:)`) give for
/// each patch: unlike a `PatchResult`, no operations and no list summary,
/// which the answer does not carry and a batch would make and copy once a
/// patch.
public struct PatchAnswer: Hashable, Sendable {
    /// The list's revision after the patch (`PatchResult.revision`).
    public var revision: Revision
    /// One entry per insert with a temporary reference, in operation order.
    public var ids: [PatchResult.Assignment]
    /// The remembered answer to a retry (same idempotency key): nothing was
    /// applied now.
    public var isRepeat: Bool

    public init(revision: Revision, ids: [PatchResult.Assignment], isRepeat: Bool = false) {
        self.revision = revision
        self.ids = ids
        self.isRepeat = isRepeat
    }
}

extension PatchResult {
    /// What the answer to this patch reports.
    public var answer: PatchAnswer { PatchAnswer(revision: revision, ids: ids, isRepeat: isRepeat) }
}
