import ChecklistModel
import ChecklistSnapshot

/// How a change replayed from the log meets the state restored from a
/// snapshot (Protocol/SNAPSHOT.md section 8).
///
/// A snapshot of a running server is written one list at a time after it
/// noted its `startLSN`, so a list in it may already contain changes logged
/// after `startLSN`. Replay therefore skips every change the restored list
/// already has, judged by revision: a list's revision grows by exactly 1 per
/// change.
public enum ReplayRule {
    /// What to do with a replayed change.
    public enum Decision: Hashable, Sendable {
        /// Apply the change to the store.
        case apply
        /// The restored state already contains it (or its list was deleted
        /// before the snapshot reached it): ignore it.
        case skip
    }

    /// Decides what to do with `change`, given the revision of its list in
    /// the store now (`nil` when the store has no such list).
    ///
    /// - list present at revision `r`: skip when `change.revision <= r`,
    ///   apply when it is `r + 1`; anything higher means the log lost
    ///   changes: `REPLAY_MISMATCH`.
    /// - list absent: apply `listCreated` (its revision must be 1); skip
    ///   anything else (the list was deleted after the snapshot started but
    ///   before it was written; the deletion follows in the log).
    ///
    /// A `listImported` change sets the whole list, so it needs none of the
    /// list's earlier changes: it applies when the list is absent or at a
    /// lower revision, and is skipped otherwise.
    public static func decide(_ change: Change, currentRevision: Revision?) throws(PersistenceError) -> Decision {
        if case .listImported = change.kind {
            guard let current = currentRevision else { return .apply }
            return change.revision > current ? .apply : .skip
        }
        guard let current = currentRevision else {
            if case .listCreated = change.kind {
                guard change.revision == 1 else {
                    throw PersistenceError(.replayMismatch, "list \(change.list) is created at revision \(change.revision), not 1")
                }
                return .apply
            }
            return .skip
        }
        if change.revision <= current { return .skip }
        if change.revision == current + 1 { return .apply }
        throw PersistenceError(.replayMismatch, "list \(change.list) is at revision \(current) but the log's next change for it is revision \(change.revision)")
    }
}
