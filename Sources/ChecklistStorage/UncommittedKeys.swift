import ChecklistModel
import Synchronization

/// The idempotency keys of a node's keyed patches whose commits are not
/// durable yet, with each one's commit position (PostgreSQL): a retry
/// answered from the store's idempotency memory meanwhile waits for the
/// original's own commit, and is answered `UNAVAILABLE` (outcome unknown)
/// while that commit is failed, never `PATCH_OK` for a change no
/// transaction holds.
///
/// Written under the store's lock (`record`, from `append`) and by the
/// committer thread (`settle`, `forget`); read by the event loops. Holds
/// only commits in flight or failed and kept, so it stays small.
final class UncommittedKeys: Sendable {
    private let positions = Mutex<[RetriedPatch: UInt64]>([:])

    /// Notes the keyed patches among `changes`, committed at `position`.
    func record(_ changes: [Change], at position: UInt64) {
        var keyed: [RetriedPatch] = []
        for change in changes {
            guard let key = change.idempotencyKey, case .patched = change.kind else { continue }
            keyed.append(RetriedPatch(namespace: change.namespace, key: key))
        }
        guard !keyed.isEmpty else { return }
        positions.withLock { map in for key in keyed { map[key] = position } }
    }

    /// Every commit up to `position` is durable, failed ones included.
    func settle(through position: UInt64) {
        positions.withLock { map in
            guard !map.isEmpty else { return }
            map = map.filter { $0.value > position }
        }
    }

    /// `changes` will never be committed (dropped after a conflict): their
    /// keys are answered from what the idempotency memory says now.
    func forget(_ changes: [Change]) {
        positions.withLock { map in
            for change in changes {
                guard let key = change.idempotencyKey else { continue }
                map.removeValue(forKey: RetriedPatch(namespace: change.namespace, key: key))
            }
        }
    }

    /// The position of the uncommitted patch with `retry`'s key, if any.
    func position(of retry: RetriedPatch) -> UInt64? {
        positions.withLock { $0[retry] }
    }
}
