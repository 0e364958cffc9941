/// Answers of one connection that may not leave before their commits are
/// durable (`ServerStorage.answersWaitForDurability`: `--fsync always`).
///
/// Answers keep request order: once one answer waits, everything after it
/// waits too, even answers that changed nothing. A barrier marks the end of
/// an answer together with the storage position that must be durable before that answer
/// (and all bytes before it) may be sent.
///
/// Pure bookkeeping, no I/O; owned by the connection's event-loop thread.
struct HeldAnswers {
    private var bytes: [UInt8] = []
    /// (end offset in `bytes`, LSN), both increasing.
    private var barriers: [(end: Int, lsn: UInt64)] = []

    var isEmpty: Bool { bytes.isEmpty }

    /// Bytes held.
    var count: Int { bytes.count }

    /// The largest LSN a held answer waits for, if any.
    var waitingFor: UInt64? { barriers.last?.lsn }

    /// Adds `output`; `outputBarriers` are (offset in `output`, LSN) pairs.
    mutating func append(_ output: UnsafeRawBufferPointer, barriers outputBarriers: [(end: Int, lsn: UInt64)]) {
        let base = bytes.count
        bytes.append(contentsOf: output)
        for b in outputBarriers { barriers.append((base + b.end, b.lsn)) }
    }

    /// Removes and hands to `send` the leading bytes whose barriers are
    /// durable by `state`. With no barrier left, everything goes. Returns
    /// false when it reached an answer whose commit failed: that answer and
    /// all after it stay held and must never be sent.
    mutating func release(_ state: (UInt64) -> CommitState, _ send: (UnsafeRawBufferPointer) -> Void) -> Bool {
        var cut = 0
        var passed = 0
        var failed = false
        for b in barriers {
            let s = state(b.lsn)
            guard s == .durable else {
                failed = s == .failed
                break
            }
            cut = b.end
            passed += 1
        }
        barriers.removeFirst(passed)
        if barriers.isEmpty { cut = bytes.count }
        guard cut > 0 else { return !failed }
        bytes.withUnsafeBytes { send(UnsafeRawBufferPointer(rebasing: $0[..<cut])) }
        bytes.removeFirst(cut)
        for i in barriers.indices { barriers[i].end -= cut }
        return !failed
    }
}
