import ChecklistModel

// What a node of several on one database needs to follow the others'
// commits (docs/POSTGRES.md, "Several nodes"): replay them into the cache
// when the cache holds nothing of its own for the list, replace a list
// wholesale when it does not fit, and take back what a lost commit taught
// the idempotency memory. None of these calls `onCommit`: they load state
// the database already holds.
extension Store {
    /// The cached revision of `list` (nil: not held), under the lock.
    public func cachedRevision(of list: ListID) -> Revision? {
        reading { $0.lists[list]?.revision }
    }

    /// Replays `changes` (one list's, consecutive revisions) committed by
    /// another node, if the cached list is at `expecting` (0: not held);
    /// then, in the same hold of the lock, calls `underLock` with the
    /// changes applied (e.g. to publish them in order). When a change does
    /// not fit, the ones before it stay applied, `underLock` gets those and
    /// the error is thrown.
    ///
    /// - Returns: false (nothing applied, `underLock` not called) when the
    ///   cached revision is not `expecting`: the node has changes of its own
    ///   on top that are not committed yet.
    public func replayFollowed(_ changes: [Change], expecting: Revision,
                               underLock: ([Change]) -> Void) throws(ChecklistError) -> Bool {
        guard let first = changes.first else { return true }
        return try locked { state throws(ChecklistError) -> Bool in
            let cached = state.lists.index(forKey: first.list).map { index in state.inPlace(index) { $0.revision } }
            guard (cached ?? 0) == expecting else { return false }
            var applied = 0
            do throws(ChecklistError) {
                for change in changes {
                    _ = try state.apply(.replay(change), in: change.namespace, limits: limits)
                    applied += 1
                }
            } catch {
                underLock(Array(changes.prefix(applied)))
                throw error
            }
            underLock(changes)
            return true
        }
    }

    /// Replaces the cached list `id` with `source`'s list of that id (nil,
    /// or not held there: the list is dropped), if `shouldReplace` says so
    /// for the cached revision (nil: not held), and then calls `underLock`
    /// in the same hold of the lock.
    ///
    /// - Returns: whether the list was replaced.
    @discardableResult
    public func replaceList(_ id: ListID, from source: Store?, if shouldReplace: (_ cached: Revision?) -> Bool,
                            underLock: () -> Void) -> Bool {
        let replacement = source?.locked { $0.lists[id] }
        return locked { state in
            guard shouldReplace(state.lists[id]?.revision) else { return false }
            state.rewrites[id, default: 0] &+= 1
            if let index = state.lists.index(forKey: id) { _ = state.remove(at: index) }
            if let replacement { state.add(replacement) }
            state.pending?.settle(id, through: nil)
            underLock()
            return true
        }
    }

    /// Takes back the remembered answer of `key` in `ns` (its commit was
    /// lost to another node's): a retry is applied, not answered from memory.
    public func withdrawAnswer(of key: IdempotencyKey, in ns: Namespace) {
        locked { $0.idempotency.withdraw(key, in: ns) }
    }
}
