import ChecklistModel

/// A request to change the store, as the one apply path takes it.
enum Mutation {
    case createList(name: String, icon: String)
    case updateList(ListID, name: String?, icon: String?)
    case deleteList(ListID)
    case patch(ListID, baseRevision: Revision?, ops: ArraySlice<PatchOperation>, key: IdempotencyKey? = nil)
    /// An already-resolved change (log recovery): applied as recorded.
    case replay(Change)
}

/// What the apply path did.
struct Commit {
    /// The change, to hand to `onCommit`.
    var change: Change
    /// The list after the change (for a deletion: as it was, with the
    /// deletion's revision); nil for a patch applied `summarized: false`.
    var summary: ListSummary?
    /// Ids given to inserts with a temporary reference.
    var assignments: [PatchResult.Assignment] = []
    /// A retried patch answered from the idempotency window: nothing was
    /// applied and `change` is not a new change (do not announce it).
    var isRepeat = false
    /// Where the patched list is in `StoreState.lists` (a patch applied
    /// now): the next patch of the same list in a batch passes it back.
    var listIndex: Dictionary<ListID, ListState>.Index?

    /// Moves the change out (a copy would retain what it holds, then
    /// release it with the commit), leaving an empty deletion of list 0:
    /// the commit is not to be read after.
    mutating func takeChange() -> Change {
        var taken = Change(namespace: Namespace(""), list: ListID(0), revision: 0, kind: .listDeleted)
        swap(&taken, &change)
        return taken
    }

    /// `summary`, which every commit has but a patch's applied `summarized: false`.
    var madeSummary: ListSummary {
        guard let summary else { preconditionFailure("Commit: the summary of a commit made without one") }
        return summary
    }
}

// The one apply path. Every mutation of the store comes through
// `apply(_:in:limits:)`: it validates, applies all or nothing, moves the
// list's revision up by exactly one and describes what it did as one
// `Change`. Live requests are first resolved into the same list-level
// changes that replay applies, so both share `apply(_ change:)`; patches
// resolve operation by operation (each against the list as the previous
// ones left it) and share `ListState.apply(_:undo:)` with replay.
extension StoreState {
    /// Applies `mutation` in `ns`. `summarized: false` leaves a patch's
    /// `Commit.summary` out (a batch's patches: their answers carry none,
    /// and making one copies the list's name and icon). `listAt` is where
    /// a patch's list is, when the caller knows (`Commit.listIndex` of the
    /// batch's previous patch of the list: no list is added or removed
    /// between two patches of a batch), saving the dictionary lookup.
    mutating func apply(_ mutation: borrowing Mutation, in ns: Namespace, limits: Limits, summarized: Bool = true,
                        listAt known: Dictionary<ListID, ListState>.Index? = nil) throws(ChecklistError) -> Commit {
        switch mutation {
        case .createList(let name, let icon):
            try Validation.name(name, limits: limits)
            try Validation.text(icon, field: "icon", limits: limits)
            try checkNewListQuota(addedBytes: name.utf8.count + icon.utf8.count, in: ns)
            return try apply(Change(namespace: ns, list: ListID(try takeListID()), revision: 1,
                                    kind: .listCreated(name: name, icon: icon)))

        case .updateList(let id, let name, let icon):
            if let name { try Validation.name(name, limits: limits) }
            if let icon { try Validation.text(icon, field: "icon", limits: limits) }
            let index = try index(of: id, in: ns)
            let list = lists.values[index]
            if quotas.bytes != nil {
                let added = (name ?? list.name).utf8.count + (icon ?? list.icon).utf8.count - list.name.utf8.count - list.icon.utf8.count
                try checkBytes(usage(of: ns).bytes, adding: added)
            }
            return try apply(Change(namespace: ns, list: id, revision: list.revision + 1,
                                    kind: .listUpdated(name: name ?? list.name, icon: icon ?? list.icon)))

        case .deleteList(let id):
            let index = try index(of: id, in: ns)
            return try apply(Change(namespace: ns, list: id, revision: lists.values[index].revision + 1, kind: .listDeleted))

        case .patch(let id, let baseRevision, let ops, let key):
            if let key, let repeated = try answerRetry(key, list: id, ops: ops, in: ns, summarized: summarized) {
                return repeated
            }
            let index: Dictionary<ListID, ListState>.Index
            if let known { index = known } else { index = try self.index(of: id, in: ns) }
            let current = try inPlace(index) { list throws(ChecklistError) in
                try list.requireRows()
                return list.revision
            }
            try Validation.batch(ops.count, limits: limits)
            try checkItemQuota(ops, in: ns)
            if let baseRevision, baseRevision != current {
                throw ChecklistError(.conflict, "list \(id) is at revision \(current), not \(baseRevision)", revision: current)
            }
            let bytesBefore = quotas.bytes == nil ? 0 : inPlace(index) { $0.storedBytes }
            // The scratch log, taken out (left without storage) while the
            // patch applies; a patch that throws drops it, the next one
            // allocates again.
            var undo = UndoLog()
            swap(&undo, &undoScratch)
            let outcome = try lists.values[index].applyPatch(ops, limits: limits, undo: &undo)
            if quotas.bytes != nil {
                let added = inPlace(index) { $0.storedBytes } - bytesBefore
                do throws(ChecklistError) {
                    try checkBytes(usage(of: ns).bytes - added, adding: added)
                } catch {
                    lists.values[index].rollBack(undo)
                    throw error
                }
            }
            lists.values[index].revision = current + 1
            let change = Change(namespace: ns, list: id, revision: current + 1, kind: .patched(outcome.applied),
                                idempotencyKey: key)
            idempotency.record(change)
            if pending != nil {
                // The entry keeps the log; the scratch stays empty.
                pending!.record(id, PendingPatches.Entry(revision: current + 1, ops: Array(ops), applied: outcome.applied,
                                                         baseRevision: baseRevision, key: key, undo: undo))
            } else {
                undo.removeAll()
                undoScratch = undo
            }
            return Commit(change: change, summary: summarized ? inPlace(index) { $0.summary } : nil,
                          assignments: outcome.assignments, listIndex: index)

        case .replay(let change):
            let commit = try apply(change)
            idempotency.record(change)
            return commit
        }
    }

    /// Applies a resolved change exactly as recorded. Its revision must be
    /// the list's next one (1 for a creation), and a created list's id must
    /// never have been used.
    private mutating func apply(_ change: Change) throws(ChecklistError) -> Commit {
        let id = change.list
        if case .listCreated(let name, let icon) = change.kind {
            guard change.revision == 1 else {
                throw ChecklistError(.conflict, "list \(id) is created at revision \(change.revision), not 1")
            }
            // With reserved blocks the database keeps ids unique across nodes, and
            // another node's block may lie below this node's counter.
            guard id.rawValue != 0, id.rawValue >= nextListID || listIDBlocks != nil, lists[id] == nil else {
                throw ChecklistError(.conflict, "list id \(id) is already taken")
            }
            let list = ListState(id: id, namespace: change.namespace, name: name, icon: icon, revision: 1,
                                 rows: RowTree(leafCapacity: treeShape.leafCapacity, innerCapacity: treeShape.innerCapacity))
            add(list)
            return Commit(change: change, summary: list.summary)
        }

        if case .listImported(let imported) = change.kind { return try applyImported(change, imported) }
        let index = try index(of: id, in: change.namespace)
        let current = inPlace(index) { $0.revision }
        guard change.revision == current + 1 else {
            throw ChecklistError(.conflict, "change to list \(id) has revision \(change.revision), the list is at \(current)",
                                 revision: current)
        }
        switch change.kind {
        case .listCreated, .listImported:
            preconditionFailure("handled above")
        case .listUpdated(let name, let icon):
            lists.values[index].name = name
            lists.values[index].icon = icon
        case .listDeleted:
            var summary = remove(at: index).summary
            summary.revision = change.revision
            return Commit(change: change, summary: summary)
        case .patched(let ops):
            try inPlace(index) { list throws(ChecklistError) in
                try list.requireRows()
                try list.apply(ops)
            }
        }
        lists.values[index].revision = change.revision
        return Commit(change: change, summary: inPlace(index) { $0.summary })
    }
}

extension StoreState {
    /// The id a created list gets: the next of the reserved blocks when
    /// there are any, else `nextListID`.
    ///
    /// - Throws: `UNAVAILABLE` when the reserved ids ran out (a new block
    ///   is on its way).
    mutating func takeListID() throws(ChecklistError) -> UInt64 {
        guard var blocks = listIDBlocks else { return nextListID }
        while let first = blocks.first, first.isEmpty || lists[ListID(first.lowerBound)] != nil {
            if first.isEmpty { blocks.removeFirst() } else { blocks[0] = (first.lowerBound + 1)..<first.upperBound }
        }
        listIDBlocks = blocks
        guard let first = blocks.first else {
            throw ChecklistError(.unavailable, "this node has no list ids reserved at the moment; try again")
        }
        listIDBlocks![0] = (first.lowerBound + 1)..<first.upperBound
        return first.lowerBound
    }
}
