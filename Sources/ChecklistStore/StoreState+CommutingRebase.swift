import ChecklistModel

// The cheap case of `Store.rebase` (docs/POSTGRES.md, "Several nodes"):
// when the node's pending patches of a list and the other node's changes
// only set fields, and of different items, they commute. Applying the other
// node's changes on top of the pending patches leaves the list exactly as
// taking the patches back, replaying the changes and applying the patches
// again would, and every patch resolves to the same operations (a TOGGLE of
// an item the other node did not touch flips the same value). So the
// changes are applied on top, and only the patches' revisions move up.
extension StoreState {
    /// Rebases `entries`, the pending patches of the list at `index` (on
    /// top of its committed revision `committed`), onto `foreign` without
    /// taking them back, when they commute with it (see above); nil, with
    /// nothing changed, when they may not (the caller takes the long way).
    ///
    /// - Throws: when a `foreign` change does not fit; the list is then in
    ///   no defined state and must be reloaded (as `Store.rebase`).
    mutating func rebaseCommuting(at index: [ListID: ListState].Index, committed: Revision, entries: [PendingPatches.Entry],
                                  onto foreign: [Change], split: Revision) throws(ChecklistError) -> Rebase? {
        let ns = inPlace(index) { $0.namespace }
        guard let foreignOps = Self.commutingOperations(entries, foreign, namespace: ns) else { return nil }
        let list = lists.keys[index]
        for (change, ops) in zip(foreign, foreignOps) {
            try inPlace(index) { list throws(ChecklistError) in try list.apply(ops) }
            idempotency.record(change)
        }
        let moved = Revision(foreign.count)
        lists.values[index].revision = committed + moved + Revision(entries.count)
        // The list after each patch, newest first from the list as it is now.
        var summary = inPlace(index) { $0.summary }
        var after = [ListSummary](repeating: summary, count: entries.count)
        for i in entries.indices.reversed() {
            after[i] = summary
            summary.uncheckedCount = UInt64(Int(summary.uncheckedCount) - Self.uncheckedMove(of: entries[i]))
            summary.revision -= 1
        }
        var row = inPlace(index) { $0.exported }
        row.summary = entries.lastIndex(where: { $0.revision <= split }).map { after[$0] } ?? summary
        var rebase = Rebase(patches: [], exportedAtSplit: row)
        _ = pending!.take(list)
        for (i, var entry) in entries.enumerated() {
            let old = entry.revision
            entry.revision += moved
            pending!.record(list, entry)
            let change = Change(namespace: ns, list: list, revision: entry.revision, kind: .patched(entry.applied),
                                idempotencyKey: entry.key)
            if entry.key != nil { idempotency.record(change) }
            let result = PatchResult(revision: entry.revision, ids: [], applied: entry.applied, summary: after[i])
            rebase.patches.append((old, .applied(change, result)))
        }
        return rebase
    }

    /// The operations of each of `foreign` when they and `entries` commute
    /// (no conditional patch, only field changes, no item both touch, no key
    /// both carry, one namespace); nil when they may not.
    static func commutingOperations(_ entries: [PendingPatches.Entry], _ foreign: [Change],
                                    namespace: Namespace) -> [[AppliedOperation]]? {
        // A sorted array searched by halves: a rebase usually holds a few
        // patches per list, where building a set costs more than the search.
        var touched: [UInt64] = []
        for entry in entries {
            guard entry.baseRevision == nil else { return nil }
            for op in entry.applied {
                guard let id = fieldChanged(by: op) else { return nil }
                touched.append(id.rawValue)
            }
        }
        touched.sort()
        let keys = Set(entries.compactMap(\.key))  // none, most often: no storage
        var operations: [[AppliedOperation]] = []
        operations.reserveCapacity(foreign.count)
        for change in foreign {
            guard change.namespace == namespace, case .patched(let ops) = change.kind else { return nil }
            if let key = change.idempotencyKey, keys.contains(key) { return nil }
            for op in ops {
                guard let id = fieldChanged(by: op) else { return nil }
                let at = touched.partitionPoint { $0 >= id.rawValue }
                if at < touched.count && touched[at] == id.rawValue { return nil }
            }
            operations.append(ops)
        }
        return operations
    }

    /// The item whose field `op` sets; nil for any other operation.
    private static func fieldChanged(by op: AppliedOperation) -> ItemID? {
        switch op {
        case .setText(let id, _), .setChecked(let id, _), .setDue(let id, _), .setRemind(let id, _), .setPrice(let id, _): id
        case .insert, .setKey, .delete, .move: nil
        }
    }

    /// How much a patch of field changes moved its list's unchecked count:
    /// each operation recorded one undo step, the field as it was.
    private static func uncheckedMove(of entry: PendingPatches.Entry) -> Int {
        var move = 0
        for (op, step) in zip(entry.applied, entry.undo.steps) {
            guard case .setChecked(_, let now) = op, case .changed(_, .checked(let was)) = step else { continue }
            move += (now ? 0 : 1) - (was ? 0 : 1)
        }
        return move
    }
}

