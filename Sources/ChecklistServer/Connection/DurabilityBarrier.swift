/// With `--fsync always`: the answers of one connection that may not leave
/// before the write-ahead log is durable up to the change they report, and
/// the wake-up when it is. Answers keep request order, so once one waits,
/// all after it wait too (`HeldAnswers`).
///
/// The one place a connection handler reaches the server's storage (the
/// log's positions and the durability waiters). Without `--fsync always`
/// it holds nothing and every answer goes at once.
///
/// Owned by the connection's event-loop thread.
struct DurabilityBarrier {
    /// The storage, only when answers wait for durability.
    private let storage: ServerStorage?
    private var held = HeldAnswers()
    /// (end in the output not yet sent, LSN) for the answers written since
    /// the last `send` that must wait.
    private var barriers: [(end: Int, lsn: UInt64)] = []

    init(storage: ServerStorage?) {
        self.storage = storage?.policy == .always ? storage : nil
    }

    /// Whether answers wait for durability at all.
    var isEnabled: Bool { storage != nil }

    /// Whether answers are held now.
    var isHolding: Bool { !held.isEmpty }

    /// Bytes of answers held (output owed, for back-pressure).
    var heldBytes: Int { held.count }

    /// The log's end now: taken before a request runs, to see whether it logged.
    var logPosition: UInt64? { storage?.log.lastLSN }

    /// Marks the answer of `outcome` as waiting for the log when it must:
    /// the log moved since `logBefore` (the request logged a change; a commit
    /// of another connection meanwhile only makes it wait longer), or the
    /// answer reports a commit the log may not have made durable yet (an
    /// idempotent retry's PATCH_OK logs nothing, but the original's change,
    /// at or before the log's end, may still be in flight).
    mutating func noteAnswer(_ outcome: RequestOutcome, logBefore: UInt64?) {
        guard let log = storage?.log else { return }
        let last = log.lastLSN
        if last != logBefore || (outcome.reportsCommit && last > log.durableLSN) {
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

    /// Sends the held answers the log's durable position allows; returns
    /// the LSN the rest waits for, if any.
    mutating func release(to connection: Connection) -> UInt64? {
        guard let storage else { return nil }
        held.release(durable: storage.waiters.durable) { connection.write($0) }
        return held.waitingFor
    }

    /// Calls `wake` (on the log's thread) once the log is durable up to
    /// `lsn`; a later call for the same connection replaces it.
    func wake(connectionID: UInt64, at lsn: UInt64, _ wake: @escaping @Sendable () -> Void) {
        storage?.waiters.wait(id: connectionID, for: lsn) { _ in wake() }
    }

    /// The connection closed: no wake-up any more.
    func cancel(connectionID: UInt64) {
        storage?.waiters.cancel(id: connectionID)
    }
}
