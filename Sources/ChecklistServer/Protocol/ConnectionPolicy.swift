import ChecklistModel

/// The load limits a protocol connection enforces, and where it reports
/// (Protocol/SPEC.md sections 1 and 4; `checklistd --help`).
struct ConnectionPolicy: Sendable {
    /// Close a connection that has sent nothing, or read none of its
    /// answers, for this long; nil: never.
    var idleTimeout: Duration?
    /// Requests of one connection worked on at once (read but not yet
    /// answered to the network); further ones wait unread.
    var maxInFlight: Int
    /// Requests that take longer are logged (`event=slow_request`).
    var slowRequest: Duration
    /// Pending output past which the connection is aborted (for logging which limit hit).
    var maxOutputBytes: Int
    /// The server's connection limit (for logging).
    var maxConnections: Int
    let log: ServerLog
    let metrics: ServerMetrics
}

/// Which answers of one connection are still in flight: written to the
/// connection but not yet handed to the kernel. Batches of answers are
/// recorded at the position (in bytes this handler has written in all) where
/// they end; a batch is sent once the bytes sent reach that position.
///
/// The bytes sent are estimated as "bytes written by this handler minus the
/// connection's pending output". Output written by others (pushes from
/// another thread) only makes that estimate low, so the count errs on the
/// side of "still in flight", and it is exact again whenever the output is
/// empty. Loop thread only, like its handler.
struct InFlightAnswers {
    private var batches: [(end: UInt64, count: Int)] = []
    private var head = 0
    /// Bytes this handler has written to the connection, in all.
    private(set) var written: UInt64 = 0
    /// Answers written but not yet sent.
    private(set) var count = 0

    /// Records `answers` answers ending with the `bytes` just written.
    mutating func wrote(bytes: Int, answers: Int) {
        written += UInt64(bytes)
        guard answers > 0 else { return }
        batches.append((written, answers))
        count += answers
    }

    /// Forgets the batches that went out, given the connection's pending output.
    mutating func update(pendingOutput: Int) {
        let sent = written - min(written, UInt64(pendingOutput))
        while head < batches.count && batches[head].end <= sent {
            count -= batches[head].count
            head += 1
        }
        if head == batches.count {
            batches.removeAll(keepingCapacity: batches.capacity <= 64)
            head = 0
        } else if head >= 64 {
            batches.removeFirst(head)
            head = 0
        }
    }
}
