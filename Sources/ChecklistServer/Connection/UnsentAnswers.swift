/// The answers of one connection still in flight: written to the
/// connection but not yet handed to the kernel. Batches of answers are
/// recorded at the position (in bytes this handler has written in all) where
/// they end; a batch is sent once the bytes sent reach that position.
///
/// The bytes sent are estimated as "bytes written by this handler minus the
/// connection's pending output". Output written by others (pushes from
/// another thread) only makes that estimate low, so the count errs on the
/// side of "still in flight", and it is exact again whenever the output is
/// empty. Loop thread only, like its handler.
struct UnsentAnswers {
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
