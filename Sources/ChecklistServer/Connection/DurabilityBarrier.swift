import ChecklistEventLoop

/// When the storage makes answers wait (`ServerStorage.answersWaitForDurability`,
/// e.g. `--fsync always`): the answers of one connection that may not leave
/// before the commit they report is durable, and the wake-up when it is. Answers keep request order, so once one waits,
/// all after it wait too (`HeldAnswers`).
///
/// The one place a connection handler reaches the server's storage (its
/// commit positions and durability wake-ups). When answers need not wait it
/// holds nothing and every answer goes at once.
///
/// Owned by the connection's event-loop thread.
struct DurabilityBarrier {
    /// The storage, only when answers wait for durability.
    private let storage: (any ServerStorage)?
    private var held = HeldAnswers()
    /// (end in the output not yet sent, LSN) for the answers written since
    /// the last `send` that must wait.
    private var barriers: [(end: Int, lsn: UInt64)] = []

    init(storage: (any ServerStorage)?) {
        self.storage = storage?.answersWaitForDurability == true ? storage : nil
    }

    /// Whether answers wait for durability at all.
    var isEnabled: Bool { storage != nil }

    /// Whether answers are held now.
    var isHolding: Bool { !held.isEmpty }

    /// Bytes of answers held (output owed, for back-pressure).
    var heldBytes: Int { held.count }

    /// The newest commit's position now: taken before a request runs, to
    /// see whether it committed.
    var logPosition: UInt64? { storage?.lastPosition }

    /// Marks the answer of `outcome` as waiting for the log when it must:
    /// the log moved since `logBefore` (the request logged a change; a commit
    /// of another connection meanwhile only makes it wait longer), or the
    /// answer reports a commit the log may not have made durable yet (an
    /// idempotent retry's PATCH_OK logs nothing, but the original's change,
    /// at or before the log's end, may still be in flight).
    mutating func noteAnswer(_ outcome: RequestOutcome, logBefore: UInt64?) {
        guard let storage else { return }
        let last = storage.lastPosition
        // A retry's answer waits only for a commit still pending: when the
        // newest one failed (on PostgreSQL, lost to another node's), the
        // original was committed apart from it.
        if last != logBefore || (outcome.reportsCommit && storage.commitState(of: last) == .pending) {
            barriers.append((outcome.answer.upperBound, last))
        }
    }

    /// Sends `output` (the answers written since the last call) to
    /// `connection` at once, or holds it when some must wait (or earlier
    /// answers still do). Returns true when it held: then `release`.
    mutating func send(_ output: UnsafeRawBufferPointer, to connection: Connection) -> Bool {
        guard barriers.isEmpty && held.isEmpty else {
            held.append(output, barriers: barriers)
            barriers.removeAll(keepingCapacity: true)
            return true
        }
        connection.write(output)
        return false
    }

    /// What `release` left.
    enum Release {
        /// Nothing is held any more.
        case done
        /// The rest waits for the commit at this position.
        case waiting(UInt64)
        /// A held answer's commit failed: it, and every answer after it,
        /// must never be sent.
        case failed
    }

    /// Sends the held answers whose commits are durable.
    mutating func release(to connection: Connection) -> Release {
        guard let storage else { return .done }
        guard held.release(storage.commitState(of:), { connection.write($0) }) else { return .failed }
        return held.waitingFor.map(Release.waiting) ?? .done
    }

    /// Calls `wake` (on the storage's thread) once the commit at `position`
    /// is durable or has failed; a later call for the same connection
    /// replaces it.
    func wake(connectionID: UInt64, at position: UInt64, _ wake: @escaping @Sendable () -> Void) {
        storage?.notify(waiter: connectionID, at: position, wake: wake)
    }

    /// The connection closed: no wake-up any more.
    func cancel(connectionID: UInt64) {
        storage?.cancelNotification(waiter: connectionID)
    }
}
