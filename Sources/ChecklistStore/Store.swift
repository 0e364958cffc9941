import ChecklistModel

/// All namespaces, lists and rows of the service, in memory.
///
/// Every mutation goes through one apply path: it is validated, applied
/// all or nothing, moves the list's revision up by exactly one and is
/// described by one `Change`, which is handed to `onCommit` before the lock
/// is released, so for each list the order of `onCommit` calls is the order
/// of revisions (and of the write-ahead log built from them).
///
/// List ids come from one store-wide counter starting at 1 and are never
/// reused; item ids from a per-list counter starting at 1, never reused in
/// that list. A list of another namespace is reported exactly like a missing
/// one.
public final class Store: Sendable {
    /// The limits this store enforces.
    public let limits: Limits
    /// Receives the changes of each commit, together: one for a request,
    /// several for an import. Internal (not private) so that `importLists`
    /// can announce its changes.
    let onCommit: @Sendable ([Change]) -> Void
    /// Receives several commits of one change each, in commit order: the
    /// patches of a batch (`patch(in:batch:into:)`), under the same rules
    /// as `onCommit`.
    let onCommitEach: @Sendable ([Change]) -> Void

    /// Locking rule: `state` holds every namespace, list and row, and is
    /// only reachable through this one reader-writer lock. Each public
    /// method takes the lock once, does all its work under it and releases
    /// it before it returns, so every call is atomic and changes are totally
    /// ordered. Reads (pages, list summaries, totals: `reading`) share the
    /// lock and never wait for each other; everything else (`locked`) takes
    /// it alone. A page's rows are read after the lock, from copy-on-write
    /// shares of their leaves taken under it: see `pageRows`. Under the lock
    /// nothing blocks; the only code run there that the store does not own
    /// is `onCommit`, the `exportLists` visitor and `withSummaries`'s body.
    /// Those must not call back into the store: the lock is not recursive,
    /// so that would deadlock.
    private let state: StoreLock
    /// Node capacities of the lists' row trees.
    let treeShape: RowTreeShape

    /// - Parameters:
    ///   - limits: text, batch and page limits to enforce.
    ///   - onCommit: called with every committed change, in commit order,
    ///     while the store's lock is held: keep it short (append to a log
    ///     buffer, enqueue pushes) and never call the store from it.
    public convenience init(limits: Limits = .default, onCommit: @escaping @Sendable (Change) -> Void = { _ in }) {
        self.init(limits: limits, treeShape: .standard, onCommitGroup: { changes in changes.forEach(onCommit) })
    }

    /// A store that announces each commit's changes together: one change
    /// for a request, all of an import's changes in one call. A write-ahead
    /// log needs that to make an import all-or-nothing after a crash.
    ///
    /// - Parameter onCommitGroup: called once per commit, in commit order,
    ///   with its changes (never empty), under the store's lock: the same
    ///   rules as `onCommit`.
    public convenience init(limits: Limits = .default, onCommitGroup: @escaping @Sendable ([Change]) -> Void) {
        self.init(limits: limits, treeShape: .standard, onCommitGroup: onCommitGroup)
    }

    /// A store that also takes the commits of a batch of patches together
    /// (`patch(in:batch:into:)`): `onCommitEach` gets them in one call, one
    /// change a commit, in commit order; without it each goes to
    /// `onCommitGroup` alone.
    ///
    /// - Parameter onCommitEach: called once per batch, with its commits'
    ///   changes (never empty), under the store's lock: the same rules as
    ///   `onCommit`. A write-ahead log writes each as its own record.
    public convenience init(limits: Limits = .default, onCommitGroup: @escaping @Sendable ([Change]) -> Void,
                            onCommitEach: @escaping @Sendable ([Change]) -> Void) {
        self.init(limits: limits, treeShape: .standard, onCommitGroup: onCommitGroup, onCommitEach: onCommitEach)
    }

    /// A store whose row trees use other node capacities (tests use tiny
    /// ones, so that small lists are already several levels deep).
    convenience init(limits: Limits, treeShape: RowTreeShape, onCommit: @escaping @Sendable (Change) -> Void) {
        self.init(limits: limits, treeShape: treeShape, onCommitGroup: { changes in changes.forEach(onCommit) })
    }

    private init(limits: Limits, treeShape: RowTreeShape, onCommitGroup: @escaping @Sendable ([Change]) -> Void,
                 onCommitEach: (@Sendable ([Change]) -> Void)? = nil) {
        self.limits = limits
        self.treeShape = treeShape
        self.onCommit = onCommitGroup
        self.onCommitEach = onCommitEach ?? { changes in for change in changes { onCommitGroup([change]) } }
        self.state = StoreLock(StoreState(treeShape: treeShape))
    }

    // MARK: Reading lists

    /// The summaries of every list in `ns`, ordered by list id.
    public func lists(in ns: Namespace) -> [ListSummary] {
        reading { state in
            (state.listIDs[ns] ?? []).compactMap { state.lists[$0]?.summary }
        }
    }

    /// `lists(in:)`, and, for each list whose revision is ahead of the
    /// committed one (`committed`, asked under the lock as `pageRows` does),
    /// its `rewrites(of:)`, in one instant.
    public func listsAhead(in ns: Namespace, committed: (ListID, Revision) -> Revision)
        -> (lists: [ListSummary], ahead: [ListID: UInt64]) {
        reading { state in
            let lists = (state.listIDs[ns] ?? []).compactMap { state.lists[$0]?.summary }
            var ahead: [ListID: UInt64] = [:]
            for list in lists where committed(list.id, list.revision) < list.revision {
                ahead[list.id] = state.rewrites[list.id] ?? 0
            }
            return (lists, ahead)
        }
    }

    /// The summary of one list.
    /// - Throws: `.notFound` when the list does not exist in `ns`.
    public func summary(in ns: Namespace, list: ListID) throws(ChecklistError) -> ListSummary {
        try reading { state throws(ChecklistError) in
            try state.readList(list, in: ns) { $0.summary }
        }
    }

    // MARK: Changing lists

    /// Creates an empty list (revision 1) with the next list id.
    /// - Throws: `.badField("name")` for an empty name, `.limitExceeded`
    ///   (field "name" or "icon") for one longer than `maxTextBytes`.
    public func createList(in ns: Namespace, name: String, icon: String) throws(ChecklistError) -> ListSummary {
        try commit(.createList(name: name, icon: icon), in: ns).madeSummary
    }

    /// Renames and/or re-icons a list (nil leaves a field as it is); the
    /// revision goes up by one even when nothing differs.
    public func updateList(in ns: Namespace, list: ListID, name: String?, icon: String?) throws(ChecklistError) -> ListSummary {
        try commit(.updateList(list, name: name, icon: icon), in: ns).madeSummary
    }

    /// Deletes a list and its rows; returns the revision of the deletion
    /// (the list's last revision plus one), which its `Change` carries too.
    public func deleteList(in ns: Namespace, list: ListID) throws(ChecklistError) -> Revision {
        try commit(.deleteList(list), in: ns).change.revision
    }

    /// Applies a batch of operations to a list, all or nothing.
    ///
    /// Operations are applied in order, each to the list as the earlier ones
    /// left it. An insert's `tempRef` lets later operations name the new
    /// item (`.temp`). When any operation fails, nothing of the batch stays
    /// applied and the revision does not change; otherwise the revision goes
    /// up by exactly one.
    ///
    /// - Parameter baseRevision: when given, the batch is applied only if the
    ///   list is still at this revision (optimistic concurrency).
    /// - Parameter idempotencyKey: when given and already answered (within
    ///   the store's bounded memory of keys), nothing is applied and the
    ///   original answer comes back with `isRepeat` set; the key is recorded
    ///   in the committed `Change` otherwise.
    /// - Throws: `.notFound` (list or item), `.conflict` (with the current
    ///   revision), `.badField` ("ops", "tempRef", "ref", "index",
    ///   "toIndex", "sequence", "clientKey": empty), `.limitExceeded`
    ///   ("ops", "text", "clientKey": over `ClientKey.maxBytes`),
    ///   `.duplicateKey` ("clientKey": another item of the list has it),
    ///   `.resyncRequired` ("sequence": a key too old to be remembered).
    public func patch(in ns: Namespace, list: ListID, baseRevision: Revision?, ops: [PatchOperation],
                      idempotencyKey: IdempotencyKey? = nil) throws(ChecklistError) -> PatchResult {
        let commit = try commit(.patch(list, baseRevision: baseRevision, ops: ops[...], key: idempotencyKey), in: ns)
        guard case .patched(let applied) = commit.change.kind else { preconditionFailure("a patch commits a patch") }
        return PatchResult(revision: commit.change.revision, ids: commit.assignments, applied: applied, summary: commit.madeSummary,
                           isRepeat: commit.isRepeat)
    }

    /// Applies a change recorded earlier (log recovery) exactly as recorded:
    /// same list and item ids, same indexes, same revision. The change's
    /// revision must be the list's next one (1 for a creation), or it is
    /// refused with `.conflict`; a change that does not fit the list (an
    /// unknown item, an index out of range) is refused and leaves the store
    /// unchanged. Limits are not enforced: the change was accepted once.
    ///
    /// - Parameter notify: whether to pass the change to `onCommit` (false
    ///   when replaying the very log that `onCommit` writes).
    public func replay(_ change: Change, notify: Bool = false) throws(ChecklistError) {
        _ = try commit(.replay(change), in: change.namespace, notify: notify)
    }

    /// Replays `change` as `replay(_:)` does when `decide` says so, given
    /// the revision of its list in the store now (nil when the store has no
    /// such list in the change's namespace), both under one hold of the
    /// lock: recovery asks this of every logged change, and reading the
    /// revision through `summary(in:list:)` first copied the whole list's
    /// state and took the lock twice. Returns whether it was applied; the
    /// change is never passed to `onCommit`.
    public func replay(_ change: Change, if decide: (Revision?) throws -> Bool) throws -> Bool {
        try locked { state throws in
            let current = state.revisionInPlace(of: change.list, in: change.namespace)
            guard try decide(current) else { return false }
            _ = try state.apply(.replay(change), in: change.namespace, limits: limits)
            return true
        }
    }

    // MARK: The lock

    /// The one apply path, under the lock: apply, then announce.
    private func commit(_ mutation: Mutation, in ns: Namespace, notify: Bool = true) throws(ChecklistError) -> Commit {
        try locked { state throws(ChecklistError) in
            // Refused while the storage cannot take changes (`refuseChanges`); replays still load.
            if notify, let refusal = state.refusal { throw refusal }
            let commit = try state.apply(mutation, in: ns, limits: limits)
            if notify && !commit.isRepeat { onCommit([commit.change]) }
            return commit
        }
    }

    /// Runs `body` with the lock held alone (the only way to change `state`).
    func locked<T, E: Error>(_ body: (inout StoreState) throws(E) -> T) throws(E) -> T {
        try state.write(body)
    }

    /// Runs `body` with the lock shared with other readers: `state` can be
    /// read, not changed.
    func reading<T, E: Error>(_ body: (borrowing StoreState) throws(E) -> T) throws(E) -> T {
        try state.read(body)
    }
}
