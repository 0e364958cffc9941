import ChecklistModel
import ChecklistStore
import ChecklistWire

/// The PATCHes one read of a connection brought in, decoded, in arrival
/// order, waiting to be applied together (`ProtocolSession.stagePatch`,
/// `applyStagedPatches`): one hold of the store's lock, one log append,
/// one publish for all of them. A request refused before it reaches the
/// store (undecodable, over the rate limit) keeps its place with its
/// refusal, so the answers still go out in request order.
///
/// Its arrays keep their capacity from batch to batch: a warm connection
/// allocates nothing here. Owned by the session, on its event-loop thread.
struct StagedPatches {
    /// One staged request: its id, and the refusal that answers it when
    /// it does not go to the store (else the next of `requests` is its).
    struct Entry {
        var requestID: UInt32
        var refusal: ChecklistError?
    }

    private(set) var entries: [Entry] = []
    /// The patches for the store, in order (the entries without a refusal).
    /// Their `ops` are slices of `operations`, made by `seal()`: empty until then.
    private(set) var requests: [PatchRequest] = []
    /// Every staged patch's operations, one patch after the other, decoded
    /// straight into this array (`decode(from:)`): one array for a batch,
    /// not one a patch. Appended to only while no slice shares it.
    private var operations: [PatchOperation] = []
    /// Where each of `requests`' operations lie in `operations`.
    private var ranges: [Range<Int>] = []
    /// Past this many operations (a bulk batch) `operations` is not kept:
    /// a connection's reads of single-operation patches (up to
    /// `ProtocolHandler.maxPatchBatch` a batch) keep theirs.
    private static let keptOperations = 256
    /// What the store made of each of `requests` (`Store.patch(in:batch:into:)`,
    /// which empties it first: `removeAll` leaves it, so that answering
    /// from a slice of it never copies it).
    var results: [Result<PatchAnswer, ChecklistError>] = []

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    /// Decodes the PATCH message in `r` (`Patch.decode(from:appendingOperationsTo:)`),
    /// its operations added to the batch's; `add` or `drop` it next.
    mutating func decode(from r: inout WireReader) throws(ChecklistError) -> Patch.Head {
        try Patch.decode(from: &r, appendingOperationsTo: &operations)
    }

    /// Stages `patch`, decoded by `decode(from:)`, for the store.
    mutating func add(_ patch: Patch.Head, requestID: UInt32) {
        entries.append(Entry(requestID: requestID, refusal: nil))
        requests.append(PatchRequest(list: patch.list, baseRevision: patch.baseRevision, ops: [],
                                     idempotencyKey: patch.idempotencyKey))
        ranges.append(patch.ops)
    }

    /// Forgets the operations of a patch decoded last (`decode(from:)`) that is not staged.
    mutating func drop(_ ops: Range<Int>) {
        precondition(ops.upperBound == operations.count, "StagedPatches.drop: not the last patch decoded")
        operations.removeSubrange(ops)
    }

    /// Gives each staged request its `ops`, before `requests` go to the
    /// store. A patch staged after this (the array shared by the slices)
    /// copies `operations` once: correct, only slower.
    mutating func seal() {
        for i in requests.indices { requests[i].ops = operations[ranges[i]] }
    }

    /// Stages a request answered by `refusal`, in its place.
    mutating func refuse(_ refusal: ChecklistError, requestID: UInt32) {
        entries.append(Entry(requestID: requestID, refusal: refusal))
    }

    /// Gives the arrays' storage back when nothing is staged (a quiet
    /// connection: thousands of idle ones should cost no batch memory).
    mutating func releaseStorage() {
        guard isEmpty else { return }
        self = StagedPatches()
    }

    /// Forgets the batch, keeping the arrays' capacity (`operations`' up
    /// to `keptOperations`). The requests go first: their slices released,
    /// `operations` is this batch's alone again and is emptied in place.
    mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        requests.removeAll(keepingCapacity: true)
        ranges.removeAll(keepingCapacity: true)
        operations.removeAll(keepingCapacity: operations.capacity <= Self.keptOperations)
    }
}
