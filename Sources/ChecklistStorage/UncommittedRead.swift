import ChecklistModel

/// A read (a PAGE, or LISTS) that showed lists whose cached revision was
/// ahead of what is committed (a database-backed node with their changes
/// in flight): it shows the node's own changes at the revisions they were
/// applied with. It is what the database holds at those revisions only
/// once those changes committed as they were, not rebased onto another
/// node's commit (`Store.rewrites(of:)` unchanged). So its answer waits
/// for them like a PATCH_OK (`AnswerHolder`), and is replaced by
/// `ERROR UNAVAILABLE` (`AnswerHolder.readRewritten`) when they were
/// rewritten or failed: a read is never answered with work that was not
/// committed so.
public struct UncommittedRead: Sendable, Hashable {
    /// Each list shown ahead of what is committed, with its
    /// `Store.rewrites(of:)` when it was read.
    public var rewrites: [ListID: UInt64]

    public init(rewrites: [ListID: UInt64]) {
        self.rewrites = rewrites
    }
}
