import ChecklistModel
import ChecklistStore
import Synchronization

/// What a PostgreSQL node knows to be committed, per list: the revision up
/// to which its cache holds the database's state and live sync has
/// published it (docs/POSTGRES.md, "Several nodes"). The cache may be ahead
/// of it by the node's own commits still in flight; it is never behind a
/// revision published.
///
/// Every change of it happens under the store's lock, together with the
/// publishing of the changes it passes (`advance`), so that live sync sees
/// per list exactly the committed changes, in revision order, without gap
/// or duplicate, whether they were committed here (the committer) or by
/// another node (the follower). Lock order: store → this → hub.
final class CommittedView: Sendable {
    private let revisions: Mutex<[ListID: Revision]>
    private let hub = Mutex<(any LiveSyncFeed)?>(nil)
    private let moves = Atomic<UInt64>(0)

    init(_ revisions: [ListID: Revision]) {
        self.revisions = Mutex(revisions)
    }

    /// Live sync to publish committed changes to (none: nothing is published).
    func attach(_ liveSync: any LiveSyncFeed) {
        hub.withLock { $0 = liveSync }
        liveSync.takeCommittedRevisions { [self] list, cached in revision(of: list) ?? cached }
    }

    /// The committed revision of `list`, if the node knows one.
    func revision(of list: ListID) -> Revision? {
        revisions.withLock { $0[list] }
    }

    /// A copy of every known revision (the committer's bases).
    var all: [ListID: Revision] { revisions.withLock { $0 } }

    /// A count that grows with every `advance` and `reset`: a list held
    /// back for the node's own commits in flight can only be followed once
    /// it moved (the follower waits for that instead of asking every list).
    var generation: UInt64 { moves.load(ordering: .acquiring) }

    /// Takes `changes` (consecutive per list, in commit order) as committed
    /// and published: each one is published and its list's revision set.
    /// Under the store's lock.
    func advance(_ changes: [Change]) {
        guard !changes.isEmpty else { return }
        revisions.withLock { Self.move(&$0, by: changes) }
        moves.add(1, ordering: .releasing)
        if let liveSync = hub.withLock({ $0 }) { liveSync.publishCommitted(changes) }
    }

    /// Moves the revisions `known` on by `changes` (consecutive per list,
    /// in commit order): each list to its last change's revision, a
    /// deleted list out.
    static func move(_ known: inout [ListID: Revision], by changes: [Change]) {
        for i in changes.indices {  // by index: reading two fields copies no change
            if case .listDeleted = changes[i].kind { known[changes[i].list] = nil } else { known[changes[i].list] = changes[i].revision }
        }
    }

    /// Sets `list`'s committed revision after it was reloaded whole (nil:
    /// gone), publishing `changes`, the committed ones since what was known
    /// (if they were all read). Under the store's lock.
    func reset(_ list: ListID, to revision: Revision?, publishing changes: [Change]) {
        if let liveSync = hub.withLock({ $0 }) { liveSync.publishCommitted(changes) }
        revisions.withLock { $0[list] = revision }
        moves.add(1, ordering: .releasing)
    }
}
