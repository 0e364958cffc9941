/// Answers of one connection that may not leave before the write-ahead log
/// is durable up to some log sequence number (`--fsync always`).
///
/// Answers keep request order: once one answer waits, everything after it
/// waits too, even answers that changed nothing. A barrier marks the end of
/// an answer together with the LSN that must be durable before that answer
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

    /// Removes and hands to `send` the leading bytes whose barriers are at or
    /// below `durable`. With no barrier left, everything goes.
    mutating func release(durable: UInt64, _ send: (UnsafeRawBufferPointer) -> Void) {
        var cut = 0
        var passed = 0
        for b in barriers {
            guard b.lsn <= durable else { break }
            cut = b.end
            passed += 1
        }
        barriers.removeFirst(passed)
        if barriers.isEmpty { cut = bytes.count }
        guard cut > 0 else { return }
        bytes.withUnsafeBytes { send(UnsafeRawBufferPointer(rebasing: $0[..<cut])) }
        bytes.removeFirst(cut)
        for i in barriers.indices { barriers[i].end -= cut }
    }
}
