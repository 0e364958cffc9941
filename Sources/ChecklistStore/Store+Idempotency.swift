import ChecklistModel

extension Store {
    /// What the store remembers of answered idempotency keys (Protocol/SPEC.md
    /// section 9), now. Takes the store's lock for as long as it takes to
    /// list every remembered answer: a snapshot uses `StoreCut.idempotencyMemory`
    /// instead, which is in step with the cut's lists and costs nothing
    /// under the lock.
    public func idempotencyMemory() -> IdempotencyMemory {
        locked { $0.idempotency.memory }
    }

    /// Adds remembered answers (from a snapshot) to the store's memory of
    /// keys. A server restarted from a snapshot calls it while it loads the
    /// snapshot, before it replays the log after it, so that retries of
    /// patches older than the snapshot are still answered, not applied, and
    /// the replayed changes add the newer keys on top.
    public func restoreIdempotency(_ memory: IdempotencyMemory) {
        locked { $0.idempotency.restore(memory) }
    }
}
