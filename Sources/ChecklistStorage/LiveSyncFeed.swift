import ChecklistModel

/// Where a storage hands on the changes it replays at start and those it
/// commits: live sync (`SubscriptionHub` of ChecklistServer conforms). The
/// storage knows nothing of subscribers, connections or event loops; this
/// is the whole of what it sees of them.
public protocol LiveSyncFeed: AnyObject, Sendable {
    /// Keeps a change replayed at start, so that CHANGES_SINCE and SUBSCRIBE
    /// reach back past a restart. Before any client is served, in replay order.
    func retainReplayed(_ change: Change)

    /// Takes committed changes, in commit order: they are kept and pushed to
    /// subscribers. Under the store's lock; never blocks.
    func publishCommitted(_ changes: [Change])

    /// Makes SUBSCRIBE and CHANGES_SINCE take `revision(list, cached)` as a
    /// list's current revision instead of the store's (`cached`): for a
    /// storage that publishes changes once committed, not when applied
    /// (PostgreSQL). Set before serving.
    func takeCommittedRevisions(from revision: @escaping @Sendable (ListID, Revision) -> Revision)
}
