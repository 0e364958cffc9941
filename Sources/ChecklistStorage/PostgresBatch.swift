import ChecklistModel
import ChecklistPostgres
import ChecklistStore

/// One commit handed to `PostgresStorage.append`: its position (the
/// storage's commit counter) and its changes.
struct QueuedCommit: Sendable {
    var position: UInt64
    private(set) var changes: [Change]
    /// The list and revision of a commit of exactly one change (as every
    /// patch's is, which a rebase may apply again); nil otherwise. Kept
    /// beside the change so that the committer's scans of every commit,
    /// once per list a rebase touches, compare two numbers instead of
    /// copying changes.
    private(set) var single: (list: ListID, revision: Revision)?

    init(position: UInt64, changes: [Change]) {
        self.position = position
        self.changes = changes
        single = changes.count == 1 ? (changes[0].list, changes[0].revision) : nil
    }

    /// Replaces, in `commits`, each patch of `list` a rebase applied again
    /// (`outcomes`, by the revision it had) with what became of it: its
    /// new change, or none. Returns each one (`RebasedCommit`).
    static func rebase(_ commits: inout [QueuedCommit], list: ListID,
                       to outcomes: [Revision: RebasedPatch]) -> [RebasedCommit] {
        var rebased: [RebasedCommit] = []
        for i in commits.indices {
            guard let patch = commits[i].single, patch.list == list, let outcome = outcomes[patch.revision] else { continue }
            let key = CrossNodeRebase.retried(commits[i].changes[0])
            commits[i] = QueuedCommit(position: commits[i].position, changes: CrossNodeRebase.changes(of: outcome))
            rebased.append(RebasedCommit(position: commits[i].position, revision: patch.revision, outcome: outcome, key: key))
        }
        return rebased
    }
}

/// A batch of queued commits turned into the `ListCommit`s of one
/// PostgreSQL transaction (`PostgresStore.commit`). Pure: no I/O.
///
/// The rows a batch leaves (`ExportedList`) are read from the store under
/// its lock in the same instant the batch is taken from the queue
/// (`Store.withExportedLists`), so they are the rows after exactly these
/// commits. The base revision of each list's first commit in the batch is
/// the revision the database holds (`committed`), which also covers an
/// import whose revision jumps.
struct PostgresBatch: Sendable {
    /// Positions `first...last` of the queued commits in the batch.
    var positions: ClosedRange<UInt64>
    var commits: [ListCommit]
    /// How much the batch adds to what a load would replay, for the
    /// upkeep's checkpoint schedule: one per change, and an imported
    /// list's items each (an IMPORT is one change holding the whole list).
    var changeCount: Int
    /// The queued commits the batch was made of, in commit order.
    var queued: [QueuedCommit]
    /// Whether an attempt at it failed in a way that may have committed it
    /// (the COMMIT's answer lost).
    var retried = false
    /// Each touched list's row after the whole batch (nil: deleted).
    var after: [ListID: ExportedList]
    /// Each touched list's item text and client key bytes after the whole
    /// batch (`ListCommit.rowBytes`; absent: not known).
    var rowBytes: [ListID: Int]

    /// - Parameters:
    ///   - queued: the commits, in commit order (never empty).
    ///   - after: each touched list's row after the whole batch (nil: deleted).
    ///   - rowBytes: each touched list's row bytes after the batch, where known.
    ///   - committed: the revision each list has in the database (absent: none).
    init(_ queued: [QueuedCommit], after: [ListID: ExportedList], rowBytes: [ListID: Int] = [:], committed: [ListID: Revision]) {
        positions = queued[0].position...queued[queued.count - 1].position
        self.queued = queued
        self.after = after
        self.rowBytes = rowBytes
        changeCount = queued.reduce(0) { total, commit in
            commit.changes.reduce(total) { sum, change in
                if case .listImported(let list) = change.kind { return sum + max(1, list.items.count) }
                return sum + 1
            }
        }
        var revisions = committed
        var lastIndex: [ListID: Int] = [:]
        var commits: [ListCommit] = []
        commits.reserveCapacity(queued.count)
        func add(_ list: ListID, _ changes: [Change]) {
            let base = revisions[list] ?? 0
            revisions[list] = changes.last?.revision ?? base
            lastIndex[list] = commits.count
            commits.append(ListCommit(namespace: changes[0].namespace, list: list, priorRevision: base,
                                      changes: changes, after: nil, answer: Self.answer(of: changes)))
        }
        for entry in queued {
            if let single = entry.single {
                add(single.list, entry.changes)
                continue
            }
            // A commit group (an import) may touch several lists: one
            // ListCommit per list, in the order of their first change.
            var order: [ListID] = []
            var byList: [ListID: [Change]] = [:]
            for change in entry.changes {
                if byList[change.list] == nil { order.append(change.list) }
                byList[change.list, default: []].append(change)
            }
            for list in order { add(list, byList[list] ?? []) }
        }
        // Only each list's last commit in the batch carries the row it leaves.
        for (list, index) in lastIndex {
            commits[index].after = after[list]
            commits[index].rowBytes = rowBytes[list]
        }
        self.commits = commits
    }

    /// The lists whose commits in this batch do not follow the revision the
    /// node knows committed (a change's revision is not its base + 1, and
    /// it is no import): they were applied on top of a commit that was
    /// lost, and must never be written.
    var unfit: Set<ListID> {
        var lists = Set<ListID>()
        for commit in commits {
            guard let first = commit.changes.first else { continue }
            if case .listImported = first.kind { continue }
            if first.revision != commit.priorRevision + 1 { lists.insert(commit.list) }
        }
        return lists
    }

    /// Whether `commit` may make its namespace hold more (lists, items or
    /// bytes): anything but deletions, and patches that only delete, check,
    /// move or set dates and prices. What a namespace's quota refusal
    /// found in the database refuses (`PostgresCommitter`).
    static func mayGrow(_ commit: QueuedCommit) -> Bool {
        commit.changes.contains { change in
            switch change.kind {
            case .listDeleted: return false
            case .patched(let ops):
                return ops.contains { op in
                    switch op {
                    case .insert, .setText, .setKey: return true
                    default: return false
                    }
                }
            default: return true
            }
        }
    }

    /// The lists the batch touches, with their namespaces.
    static func touched(_ queued: [QueuedCommit]) -> [(Namespace, ListID)] {
        var seen = Set<ListID>()
        var lists: [(Namespace, ListID)] = []
        for entry in queued {
            for change in entry.changes where seen.insert(change.list).inserted { lists.append((change.namespace, change.list)) }
        }
        return lists
    }

    /// The revision each touched list has once the batch is committed; nil
    /// for a deleted list.
    var revisionsAfter: [(ListID, Revision?)] {
        var result: [ListID: Revision?] = [:]
        for commit in commits {
            let deleted = commit.changes.last.map { if case .listDeleted = $0.kind { true } else { false } } ?? false
            result[commit.list] = deleted ? nil : commit.revision
        }
        return result.map { ($0.key, $0.value) }
    }

    /// The idempotency answer of a keyed PATCH, remembered in the same
    /// transaction as its change.
    private static func answer(of changes: [Change]) -> RememberedAnswer? {
        guard changes.count == 1, let change = changes.first, let key = change.idempotencyKey,
              case .patched(let applied) = change.kind else { return nil }
        let inserted = applied.compactMap { op -> ItemID? in if case .insert(let id, _, _) = op { id } else { nil } }
        return RememberedAnswer(client: key.client, answer: IdempotencyMemory.Answer(
            sequence: key.sequence, list: change.list, revision: change.revision, inserted: ItemIDRun.runs(of: inserted)))
    }
}
