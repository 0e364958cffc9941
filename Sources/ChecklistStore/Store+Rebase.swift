import ChecklistModel

/// What became of one of a node's pending patches when its commit lost to
/// another node's and it was applied again on top (`Store.rebase`).
public enum RebasedPatch: Sendable, Hashable {
    /// Applied again: its new change (a new revision, maybe new item ids)
    /// and the answer it now gets.
    case applied(Change, PatchResult)
    /// The other node had applied the same keyed patch (a retry sent there):
    /// nothing is applied again and the answer is the one it gave.
    case repeated(PatchResult)
    /// It no longer applies: `CONFLICT` for a `baseRevision` now stale, or
    /// what the apply met (an item the other node deleted, ...).
    case refused(ChecklistError)
}

/// The outcome of `Store.rebase`.
public struct Rebase: Sendable {
    /// What became of each pending patch, by the revision it had, oldest first.
    public var patches: [(revision: Revision, outcome: RebasedPatch)]
    /// The list's row once the other node's changes and the rebased
    /// patches that had revisions up to `split` are applied (nil: the
    /// other node deleted it).
    public var exportedAtSplit: ExportedList?
}

// Rebasing a PostgreSQL node's commits in flight onto what another node
// committed first (docs/POSTGRES.md, "Several nodes"), and the list ids a
// node reserves for its creations. None of these calls `onCommit`: the
// committer that calls them carries the changes itself.
extension Store {
    /// From now on, keeps each applied patch's operations and undo log
    /// until `settlePending` says its commit is settled, so that `rebase`
    /// can apply it again on top of another node's commits.
    public func keepPendingPatches() {
        locked { state in if state.pending == nil { state.pending = PendingPatches() } }
    }

    /// The commits of these lists are settled up to these revisions (nil:
    /// the list is gone or was replaced): their pending patches are dropped.
    public func settlePending(_ revisions: [(ListID, Revision?)]) {
        locked { state in
            guard state.pending != nil else { return }
            for (list, revision) in revisions { state.pending!.settle(list, through: revision) }
        }
    }

    /// Applies the node's pending patches of `list` again on top of
    /// `foreign`, the changes another node committed after `committed` (the
    /// revision the node knew committed): under the lock, the patches are
    /// taken back newest first, `foreign` replayed, and each patch applied
    /// again in its old order as the client sent it: one with a
    /// `baseRevision` is refused with `CONFLICT` (the list moved under it),
    /// a keyed one `foreign` already answered gets that answer, the others
    /// get new revisions (and ids). When the patches and `foreign` only set
    /// fields of different items, they commute: `foreign` is applied on top
    /// and the patches keep their operations at new revisions, the same
    /// outcome without taking anything back (`rebaseCommuting`).
    /// `underLock` runs in the same hold of the lock with the outcome.
    ///
    /// - Parameter split: the last revision (as the cache had it) of the
    ///   patches whose row `exportedAtSplit` must show.
    /// - Returns: nil, with nothing changed, when the cache does not hold
    ///   exactly `committed` plus pending patches (another kind of change is
    ///   in flight, or the list is not resident).
    /// - Throws: when a `foreign` change does not fit; the list is then in
    ///   no defined state and must be reloaded.
    public func rebase(_ list: ListID, committed: Revision, onto foreign: [Change], split: Revision,
                       underLock: (Rebase) -> Void) throws(ChecklistError) -> Rebase? {
        try locked { state throws(ChecklistError) -> Rebase? in
            guard let index = state.lists.index(forKey: list), state.inPlace(index, { $0.unloaded == nil }),
                  let entries = state.pending?.byList[list], let first = entries.first, let last = entries.last,
                  first.revision == committed + 1, last.revision == state.inPlace(index, { $0.revision }),
                  entries.count == Int(last.revision - committed) else { return nil }
            state.rewrites[list, default: 0] &+= 1
            if let rebase = try state.rebaseCommuting(at: index, committed: committed, entries: entries, onto: foreign, split: split) {
                underLock(rebase)
                return rebase
            }
            let ns = state.lists.values[index].namespace
            _ = state.pending!.take(list)
            for entry in entries.reversed() {
                state.lists.values[index].rollBack(entry.undo)
                if let key = entry.key { state.idempotency.withdraw(key, in: ns) }
            }
            state.lists.values[index].revision = committed
            for change in foreign { _ = try state.apply(.replay(change), in: change.namespace, limits: limits) }
            var rebase = Rebase(patches: [], exportedAtSplit: nil)
            var exportedSplit = false
            for entry in entries {
                if entry.revision > split, !exportedSplit {
                    rebase.exportedAtSplit = state.lists[list]?.exported
                    exportedSplit = true
                }
                rebase.patches.append((entry.revision, Self.reapply(entry, list, in: ns, &state, limits: limits)))
            }
            if !exportedSplit { rebase.exportedAtSplit = state.lists[list]?.exported }
            underLock(rebase)
            return rebase
        }
    }

    /// Applies one pending patch again, as the client sent it.
    private static func reapply(_ entry: PendingPatches.Entry, _ list: ListID, in ns: Namespace,
                                _ state: inout StoreState, limits: Limits) -> RebasedPatch {
        do throws(ChecklistError) {
            // A key the other node answered first (a retry sent there) gets
            // its answer, whatever the base: the other node's commit of the
            // same patch is what moved the list past it.
            if let key = entry.key, let repeated = try state.answerRetry(key, list: list, ops: entry.ops[...], in: ns) {
                let result = PatchResult(revision: repeated.change.revision, ids: repeated.assignments, applied: [],
                                         summary: repeated.madeSummary, isRepeat: true)
                return .repeated(result)
            }
            if entry.baseRevision != nil {
                let current = state.lists[list]?.revision
                throw ChecklistError(.conflict, current.map { "list \(list) is at revision \($0), not \(entry.baseRevision!)" }
                                         ?? "list \(list) not found", revision: current ?? 0)
            }
            let commit = try state.apply(.patch(list, baseRevision: nil, ops: entry.ops[...], key: entry.key), in: ns, limits: limits)
            guard case .patched(let applied) = commit.change.kind else { preconditionFailure("a patch commits a patch") }
            let result = PatchResult(revision: commit.change.revision, ids: commit.assignments, applied: applied,
                                     summary: commit.madeSummary, isRepeat: commit.isRepeat)
            return commit.isRepeat ? .repeated(result) : .applied(commit.change, result)
        } catch {
            return .refused(error)
        }
    }

    /// Hands this node the list ids `ids` for its creations, after the ones
    /// it holds; from the first call on, created lists take only reserved
    /// ids (`UNAVAILABLE` when none is left), and changes creating lists
    /// with ids below the store's counter are taken (another node's block).
    /// The store's counter moves past the block, so an import never picks
    /// an id of it.
    public func addListIDs(_ ids: Range<UInt64>) {
        locked { state in
            state.listIDBlocks = (state.listIDBlocks ?? []) + [ids]
            state.nextListID = max(state.nextListID, ids.upperBound)
        }
    }

    /// How many reserved list ids are left (nil: ids are not reserved).
    public var listIDsLeft: Int? {
        locked { state in state.listIDBlocks.map { $0.reduce(0) { $0 + $1.count } } }
    }
}
