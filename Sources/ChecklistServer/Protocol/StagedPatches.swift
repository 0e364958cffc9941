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
    private(set) var requests: [PatchRequest] = []
    /// What the store made of each of `requests` (`Store.patch(in:batch:into:)`,
    /// which empties it first: `removeAll` leaves it, so that answering
    /// from a slice of it never copies it).
    var results: [Result<PatchResult, ChecklistError>] = []

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    /// Stages `patch` for the store.
    mutating func add(_ patch: Patch, requestID: UInt32) {
        entries.append(Entry(requestID: requestID, refusal: nil))
        requests.append(PatchRequest(list: patch.list, baseRevision: patch.baseRevision, ops: patch.ops,
                                     idempotencyKey: patch.idempotencyKey))
    }

    /// Stages a request answered by `refusal`, in its place.
    mutating func refuse(_ refusal: ChecklistError, requestID: UInt32) {
        entries.append(Entry(requestID: requestID, refusal: refusal))
    }

    /// Forgets the batch, keeping the arrays' capacity.
    mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        requests.removeAll(keepingCapacity: true)
    }
}
