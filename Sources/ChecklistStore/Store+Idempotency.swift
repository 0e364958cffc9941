import ChecklistModel

extension Store {
    /// What the store remembers of answered idempotency keys (Protocol/SPEC.md
    /// section 9), for a snapshot: a server restarted from the snapshot calls
    /// `restoreIdempotency(_:)` before replaying the log after it, so retries
    /// of patches older than the snapshot are still answered, not applied.
    ///
    /// Takes the store's lock: call it from outside `cut`'s closure (taking
    /// it inside a snapshot's cut needs `StoreCut` to carry the window).
    public func idempotencyMemory() -> IdempotencyMemory {
        locked { $0.idempotency.memory }
    }

    /// Adds remembered answers (from a snapshot) to the store's memory of keys.
    public func restoreIdempotency(_ memory: IdempotencyMemory) {
        locked { $0.idempotency.restore(memory) }
    }
}
