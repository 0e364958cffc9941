import ChecklistModel

/// The patches a PostgreSQL node applied to its cache whose commits are
/// not settled yet, per list, oldest first: what it takes to rebase them
/// when another node committed the list first (`Store.rebase`). Each keeps
/// the client's operations (re-applied, not the resolved ones: a TOGGLE
/// flips what the other node left) and the undo log that takes it back.
///
/// Kept only when the storage asks for it (`Store.keepPendingPatches`);
/// entries leave as the committer reports their commits settled
/// (`Store.settlePending`), so it holds at most the node's commits in flight.
struct PendingPatches {
    struct Entry {
        /// The list's revision after the patch.
        var revision: Revision
        var ops: [PatchOperation]
        /// The operations as they resolved (the committed change's).
        var applied: [AppliedOperation]
        var baseRevision: Revision?
        var key: IdempotencyKey?
        var undo: UndoLog
    }

    private(set) var byList: [ListID: [Entry]] = [:]

    mutating func record(_ list: ListID, _ entry: Entry) {
        byList[list, default: []].append(entry)
    }

    /// Drops the entries of `list` at or below `revision` (nil: all of them).
    mutating func settle(_ list: ListID, through revision: Revision?) {
        guard let index = byList.index(forKey: list) else { return }
        // In place: a copy taken out of the dictionary would copy the entries too.
        if let revision {
            let settled = byList.values[index].prefix { $0.revision <= revision }.count
            byList.values[index].removeFirst(settled)
        } else {
            byList.values[index].removeAll()
        }
        if byList.values[index].isEmpty { byList.remove(at: index) }
    }

    /// Takes every entry of `list` out.
    mutating func take(_ list: ListID) -> [Entry] {
        byList.removeValue(forKey: list) ?? []
    }
}
