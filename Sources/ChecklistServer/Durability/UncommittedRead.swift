import ChecklistModel

/// A PAGE read from a list whose cached revision was ahead of what is
/// committed (a database-backed node with that list's changes in flight):
/// the page shows the node's own changes at the revisions they were
/// applied with. It is what the database holds at `revision` only once
/// those changes committed as they were, not rebased onto another node's
/// commit (`Store.rewrites(of:)` unchanged). So its answer waits for them
/// like a PATCH_OK (`DurabilityBarrier`), and is replaced by `ERROR
/// UNAVAILABLE` (`DurabilityBarrier.readRewritten`) when they were
/// rewritten or failed: a read is never answered with work that was not
/// committed so.
public struct UncommittedRead: Sendable, Hashable {
    public var list: ListID
    /// The revision the page names.
    public var revision: Revision
    /// The list's `Store.rewrites(of:)` when the page was read.
    public var rewrites: UInt64

    public init(list: ListID, revision: Revision, rewrites: UInt64) {
        self.list = list
        self.revision = revision
        self.rewrites = rewrites
    }
}
