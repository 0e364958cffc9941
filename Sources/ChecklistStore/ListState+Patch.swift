import ChecklistModel

// Resolving a client's PATCH batch against a list: temporary references
// become item ids, positions become indexes, toggles become their outcome.
// Each operation is resolved against the list as the earlier operations of
// the batch left it, then applied through the shared `apply(_:undo:)`.
extension ListState {
    /// The outcome of a batch: the operations as applied and the ids given
    /// to inserts that carried a temporary reference.
    struct BatchOutcome {
        var applied: [AppliedOperation] = []
        var assignments: [PatchResult.Assignment] = []
    }

    /// Resolves and applies `ops` all or nothing: when an operation fails,
    /// everything the batch did so far is undone and the error is thrown.
    ///
    /// `undo` must be empty; it gets what takes the batch back (kept while
    /// its commit may still be rebased: `PendingPatches`). The caller
    /// passes it in so that its storage can be reused from patch to patch.
    mutating func applyPatch(_ ops: ArraySlice<PatchOperation>, limits: Limits,
                             undo: inout UndoLog) throws(ChecklistError) -> BatchOutcome {
        precondition(undo.isEmpty, "applyPatch: the undo log must start empty")
        var outcome = BatchOutcome()
        outcome.applied.reserveCapacity(ops.count)
        var temps: [UInt64: ItemID] = [:]
        do throws(ChecklistError) {
            // By index: `for op in ops` would copy each operation out (retaining its texts).
            for i in ops.indices {
                let resolved = try resolve(ops[i], temps: &temps, assignments: &outcome.assignments, limits: limits)
                try apply(resolved, undo: &undo)
                outcome.applied.append(resolved)
            }
        } catch {
            rollBack(undo)
            throw error
        }
        return outcome
    }

    /// Turns one client operation into the operation to apply.
    ///
    /// `op` is taken as a copy and consumed: its parts move into the
    /// resolved operation instead of being copied a second time.
    private func resolve(_ op: consuming PatchOperation, temps: inout [UInt64: ItemID],
                         assignments: inout [PatchResult.Assignment],
                         limits: Limits) throws(ChecklistError) -> AppliedOperation {
        switch consume op {
        case .insert(let tempRef, let position, let fields):
            try Validation.text(fields.text, field: "text", limits: limits)
            if let key = fields.clientKey { try ClientKey.validate(key) }
            guard nextItemID < UInt64.max else {
                throw ChecklistError(.limitExceeded, "list \(id) has no item ids left", field: "ops")
            }
            let id = ItemID(nextItemID)
            if let tempRef {
                guard tempRef != 0 else { throw .badField("tempRef", "tempRef must not be 0") }
                guard temps[tempRef] == nil else {
                    throw .badField("tempRef", "tempRef \(tempRef) is used twice in this patch")
                }
            }
            let index: UInt64
            switch position {
            case .index(let i):
                guard i <= UInt64(rows.count) else { throw Self.badIndex(i, count: rows.count) }
                index = i
            case .after(let ref):
                let anchor = try resolve(ref, temps: temps)
                guard let at = rows.index(of: anchor) else { throw Self.itemNotFound(anchor) }
                index = UInt64(at + 1)
            case .end:
                index = UInt64(rows.count)
            }
            if let tempRef {
                // Registered only now: an insert cannot be placed after itself.
                temps[tempRef] = id
                assignments.append(PatchResult.Assignment(tempRef: tempRef, id: id))
            }
            return .insert(id: id, index: index, fields: fields)
        case .setText(let ref, let text):
            try Validation.text(text, field: "text", limits: limits)
            return .setText(try resolve(ref, temps: temps), text)
        case .setChecked(let ref, let checked):
            return .setChecked(try resolve(ref, temps: temps), checked)
        case .toggle(let ref):
            let id = try resolve(ref, temps: temps)
            guard let checked = rows.isChecked(id) else { throw Self.itemNotFound(id) }
            return .setChecked(id, !checked)
        case .setDue(let ref, let due):
            return .setDue(try resolve(ref, temps: temps), due)
        case .setRemind(let ref, let remind):
            return .setRemind(try resolve(ref, temps: temps), remind)
        case .setPrice(let ref, let price):
            return .setPrice(try resolve(ref, temps: temps), price)
        case .setKey(let ref, let key):
            if let key { try ClientKey.validate(key) }
            return .setKey(try resolve(ref, temps: temps), key)
        case .delete(let ref):
            return .delete(try resolve(ref, temps: temps))
        case .move(let ref, let toIndex):
            return .move(try resolve(ref, temps: temps), toIndex: toIndex)
        }
    }

    /// The item a reference names. A temporary reference must name an insert
    /// earlier in the batch; whether the item still exists is checked when
    /// the operation is applied (it may have been deleted since).
    private func resolve(_ ref: ItemRef, temps: [UInt64: ItemID]) throws(ChecklistError) -> ItemID {
        switch ref {
        case .id(let id):
            return id
        case .temp(let tempRef):
            guard let id = temps[tempRef] else {
                throw .badField("ref", "temporary reference \(tempRef) names no item inserted earlier in this patch")
            }
            return id
        }
    }
}
