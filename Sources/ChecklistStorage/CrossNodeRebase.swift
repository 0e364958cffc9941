import ChecklistModel
import ChecklistPostgres
import ChecklistStore

/// The committer's step inside a commit's transaction, once the rows of
/// the batch's lists are locked (docs/POSTGRES.md, "Several nodes"): each
/// list another node committed since the batch was made is caught up with
/// those changes (read after the node's committed revision, never the
/// whole list) and the node's patches of it in flight, in the batch and
/// queued after it, are applied again on top (`Store.rebase`). Their held
/// answers are replaced by what the rebased apply gave (`RebasedPatchAnswers`).
struct CrossNodeRebase {
    let committer: PostgresCommitter
    let database: PostgresStore
    let answers: RebasedPatchAnswers

    /// The lists of `batch` that existed before it (so the transaction
    /// locks them), in the order of their first commit, each with the base
    /// of that commit (the changes after it are read with the lock).
    static func lockable(_ batch: PostgresBatch) -> [(list: ListID, base: Revision)] {
        var seen = Set<ListID>()
        var lists: [(list: ListID, base: Revision)] = []
        for commit in batch.commits where seen.insert(commit.list).inserted && commit.priorRevision > 0 {
            lists.append((commit.list, commit.priorRevision))
        }
        return lists
    }

    /// Each list of `batch` whose base is not the locked revision, with its base.
    static func stale(_ batch: PostgresBatch, locked: [ListID: Revision]) -> [ListID: Revision] {
        var seen = Set<ListID>()
        var stale: [ListID: Revision] = [:]
        for commit in batch.commits where seen.insert(commit.list).inserted && commit.priorRevision > 0 {
            if locked[commit.list] != commit.priorRevision { stale[commit.list] = commit.priorRevision }
        }
        return stale
    }

    /// Rebases every list of `stale` (list: the base the batch has) onto
    /// the changes stored after it (`stored`, read with the lock; read
    /// again for a list they do not bring to its locked revision), and
    /// remakes `batch` on top. The changes rebased onto are added to
    /// `unpublished`, for the caller to publish (`PostgresCommitter.publish`)
    /// while its writes are in flight, before the batch's own: nothing else
    /// waits for them meanwhile (the follower leaves a list with changes of
    /// the node's own in flight to the committer).
    ///
    /// - Throws: `STALE_REVISION` naming the lists that cannot be rebased
    ///   (the other node's changes are not all stored any more, the node has
    ///   other kinds of changes of the list in flight, or a change did not
    ///   fit): the caller drops their commits and reloads them. The lists
    ///   rebased before stay rebased, and `batch` is remade for them.
    func rebase(_ batch: inout PostgresBatch, stale: [ListID: Revision], locked: [ListID: Revision],
                stored read: [ListID: [Change]], unpublished: inout [Change]) throws {
        var stored = read
        // The read came after the lock in the same flight, so it reaches the
        // locked revisions; if it ever does not, read those lists again.
        let short = stale.filter { list, base in !Self.follows(stored[list] ?? [], base: base, to: locked[list]) }
        if !short.isEmpty { stored.merge(try database.changes(after: short)) { _, again in again } }
        var refused: [ListID] = []
        let splits = Self.lastRevisions(batch)
        for (list, base) in stale.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            let foreign = stored[list] ?? []
            guard Self.follows(foreign, base: base, to: locked[list]), let split = splits[list],
                  (try? rebase(list, base: base, foreign: foreign, split: split, &batch)) == true else {
                refused.append(list)
                continue
            }
            unpublished += foreign
        }
        let retried = batch.retried
        var committed = committer.view.all
        CommittedView.move(&committed, by: unpublished)  // as publishing them will
        batch = PostgresBatch(batch.queued, after: batch.after, rowBytes: batch.rowBytes, committed: committed)
        batch.retried = retried
        guard refused.isEmpty else {
            throw PostgresError(.staleRevision, "lists committed by another node that cannot be rebased", lists: refused)
        }
    }

    /// The revision of each list's last change in `batch` (one pass, not
    /// one per list rebased).
    static func lastRevisions(_ batch: PostgresBatch) -> [ListID: Revision] {
        var last: [ListID: Revision] = [:]
        for i in batch.commits.indices where !batch.commits[i].changes.isEmpty {
            last[batch.commits[i].list] = batch.commits[i].changes[batch.commits[i].changes.count - 1].revision
        }
        return last
    }

    /// Whether `foreign` are exactly the changes from `base + 1` to the
    /// locked revision (nil: the list is gone, the last one its deletion).
    static func follows(_ foreign: [Change], base: Revision, to locked: Revision?) -> Bool {
        guard let last = foreign.last else { return false }
        for (i, change) in foreign.enumerated() where change.revision != base + 1 + Revision(i) { return false }
        if let locked { return last.revision == locked }
        if case .listDeleted = last.kind { return true }
        return false
    }

    /// Rebases one list; false when the store cannot (nothing changed).
    private func rebase(_ list: ListID, base: Revision, foreign: [Change], split: Revision,
                        _ batch: inout PostgresBatch) throws -> Bool {
        var outcomes: [Revision: RebasedPatch] = [:]
        var queuedOutcomes: [RebasedCommit] = []
        let rebased = try committer.store.rebase(list, committed: base, onto: foreign, split: split) { rebase in
            outcomes = Dictionary(rebase.patches.map { ($0.revision, $0.outcome) }, uniquingKeysWith: { first, _ in first })
            queuedOutcomes = committer.rewriteQueued(list, outcomes)
        }
        guard let rebased else { return false }
        for commit in queuedOutcomes + QueuedCommit.rebase(&batch.queued, list: list, to: outcomes) {
            record(commit, list: list)
        }
        if let row = rebased.exportedAtSplit { batch.after[list] = row } else { batch.after[list] = nil }
        batch.rowBytes[list] = nil  // not known at the split: the stored value is kept
        committer.withLog { $0.debug("postgres_rebased", ["list": list.rawValue, "base": base, "foreign": foreign.count,
                                                          "patches": rebased.patches.count]) }
        return true
    }

    /// The changes a rebased patch commits: its new one, or none.
    static func changes(of outcome: RebasedPatch) -> [Change] {
        if case .applied(let change, _) = outcome { return [change] }
        return []
    }

    /// A keyed patch's change: its namespace and key.
    static func retried(_ change: Change) -> RetriedPatch? {
        change.idempotencyKey.map { RetriedPatch(namespace: change.namespace, key: $0) }
    }

    private func record(_ commit: RebasedCommit, list: ListID) {
        let answer: RebasedAnswer = switch commit.outcome {
        case .applied(_, let result), .repeated(let result): .patched(revision: result.revision, ids: result.ids)
        case .refused(let error): .refused(error)
        }
        answers.record(answer, position: commit.position, list: list, revision: commit.revision, key: commit.key)
    }
}

/// One of a node's commits (of one patch) a rebase applied again: its
/// position, the revision its held answer shows, what became of it, and
/// its key when the patch was keyed.
struct RebasedCommit {
    var position: UInt64
    var revision: Revision
    var outcome: RebasedPatch
    var key: RetriedPatch?
}
