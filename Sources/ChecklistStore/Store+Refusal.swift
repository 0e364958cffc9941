import ChecklistModel

extension Store {
    /// Refuses every change with `error` from now on (nil: accepts them
    /// again): creations, updates, deletions and patches, including
    /// retries answered from the memory of idempotency keys, throw it and
    /// apply nothing. Replays (loading stored state) and imports are not
    /// refused. A storage whose database is unreachable sets it
    /// (`UNAVAILABLE`), so that nothing it cannot store is applied.
    public func refuseChanges(_ error: ChecklistError?) {
        locked { $0.refusal = error }
    }
}
