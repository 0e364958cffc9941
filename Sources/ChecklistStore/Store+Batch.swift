import ChecklistModel

/// One PATCH of a batch (`Store.patch(in:batch:into:)`): what
/// `Store.patch(in:list:baseRevision:ops:idempotencyKey:)` takes.
public struct PatchRequest: Sendable {
    public var list: ListID
    public var baseRevision: Revision?
    /// The patch's operations: often a slice of one array that holds a
    /// whole batch's (a connection's staged PATCHes), so that a batch
    /// allocates one array, not one a patch.
    public var ops: ArraySlice<PatchOperation>
    public var idempotencyKey: IdempotencyKey?

    public init(list: ListID, baseRevision: Revision?, ops: ArraySlice<PatchOperation>,
                idempotencyKey: IdempotencyKey? = nil) {
        self.list = list
        self.baseRevision = baseRevision
        self.ops = ops
        self.idempotencyKey = idempotencyKey
    }

    public init(list: ListID, baseRevision: Revision?, ops: [PatchOperation], idempotencyKey: IdempotencyKey? = nil) {
        self.init(list: list, baseRevision: baseRevision, ops: ops[...], idempotencyKey: idempotencyKey)
    }
}

/// The PATCHes of one connection's batch, with the namespace they are
/// applied in (`Store.patch(batches:into:)`).
public struct PatchBatch: Sendable {
    public var namespace: Namespace
    public var requests: [PatchRequest]

    public init(namespace: Namespace, requests: [PatchRequest]) {
        self.namespace = namespace
        self.requests = requests
    }
}

extension Store {
    /// Applies the patches of `batch` in order under one hold of the lock,
    /// each exactly as `patch(in:list:baseRevision:ops:idempotencyKey:)`
    /// would apply it after the ones before it: all or nothing, its own
    /// revision, its own `Change` and commit, its own idempotency record.
    /// A patch refused in the middle leaves the others as they would be
    /// one at a time. The batch's commits go to the commit callback
    /// together, in order (`onCommitEach`, one change a commit), once.
    ///
    /// `results` is emptied (its capacity kept) and gets one answer (or
    /// refusal) per patch, in order.
    public func patch(in ns: Namespace, batch: [PatchRequest],
                      into results: inout [Result<PatchAnswer, ChecklistError>]) {
        results.removeAll(keepingCapacity: true)
        guard !batch.isEmpty else { return }
        locked { state in
            var changes = state.takeBatchChanges()
            apply(batch, in: ns, to: &state, changes: &changes, results: &results)
            if !changes.isEmpty { onCommitEach(changes) }
            state.returnBatchChanges(&changes)
        }
    }

    /// Applies several batches, each of its own namespace, one after the
    /// other under one hold of the lock, each patch exactly as
    /// `patch(in:batch:into:)` applies it: the PATCHes that several
    /// connections sent in one turn of an event loop, committed together.
    /// Their commits go to the commit callback together, in order, once.
    ///
    /// `results` is emptied (its capacity kept) and gets one answer (or
    /// refusal) per patch, batch after batch, in order.
    public func patch(batches: [PatchBatch], into results: inout [Result<PatchAnswer, ChecklistError>]) {
        results.removeAll(keepingCapacity: true)
        guard !batches.isEmpty else { return }
        locked { state in
            var changes = state.takeBatchChanges()
            for batch in batches {
                apply(batch.requests, in: batch.namespace, to: &state, changes: &changes, results: &results)
            }
            if !changes.isEmpty { onCommitEach(changes) }
            state.returnBatchChanges(&changes)
        }
    }

    /// Applies `batch` in order under the lock the caller holds, gathering
    /// the commits in `changes` and a result per patch in `results`.
    private func apply(_ batch: [PatchRequest], in ns: Namespace, to state: inout StoreState, changes: inout [Change],
                       results: inout [Result<PatchAnswer, ChecklistError>]) {
        // Refused while the storage cannot take changes, as one at a time.
        if let refusal = state.refusal {
            for _ in batch { results.append(.failure(refusal)) }
            return
        }
        // The last list patched, and where it is: the batch's patches of
        // one list look it up once (patches add and remove no list).
        var last: (list: ListID, index: Dictionary<ListID, ListState>.Index)?
        for request in batch {
            let mutation = Mutation.patch(request.list, baseRevision: request.baseRevision, ops: request.ops,
                                          key: request.idempotencyKey)
            do throws(ChecklistError) {
                var commit = try state.apply(mutation, in: ns, limits: limits, summarized: false,
                                             listAt: last?.list == request.list ? last?.index : nil)
                if let index = commit.listIndex { last = (request.list, index) }
                results.append(.success(PatchAnswer(revision: commit.change.revision, ids: commit.assignments,
                                                    isRepeat: commit.isRepeat)))
                if !commit.isRepeat { changes.append(commit.takeChange()) }
            } catch {
                results.append(.failure(error))
            }
        }
    }
}

extension StoreState {
    /// The array a batch gathers its changes in, empty, with the capacity
    /// the last batch left it: batches allocate none once warm.
    mutating func takeBatchChanges() -> [Change] {
        var changes: [Change] = []
        swap(&changes, &batchChanges)
        return changes
    }

    /// Gives the array back, emptied, for the next batch (a consumer that
    /// kept it makes the next batch copy, nothing more). `inout`, so that
    /// the caller's is the only reference while it is emptied: a copy left
    /// behind would make emptying it allocate a new buffer of its capacity.
    mutating func returnBatchChanges(_ changes: inout [Change]) {
        changes.removeAll(keepingCapacity: true)
        swap(&changes, &batchChanges)
    }
}
