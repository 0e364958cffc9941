/// Pipelining on one connection: how many requests are in flight (read,
/// answered, but not yet handed to the kernel), the `maxInFlight` limit
/// past which further requests wait unread (Protocol/SPEC.md section 4.1),
/// and whether input was left unread for a later offer.
///
/// Pure bookkeeping; owned by the connection's event-loop thread.
struct RequestPipeline {
    let maxInFlight: Int
    private var unsent = UnsentAnswers()
    /// Requests are being held back at `maxInFlight` (counted once per stall).
    private var pausedAtLimit = false
    /// The last read left input unconsumed: when answers held for
    /// durability go out, it must be offered again (the connection only
    /// does that by itself for output it holds, and held answers are not
    /// in it yet).
    var inputHeldBack = false

    init(maxInFlight: Int) {
        self.maxInFlight = maxInFlight
    }

    /// Starts a read, with the connection's output still owed: forgets the
    /// answers that left since.
    mutating func beginReading(pendingOutput: Int) {
        unsent.update(pendingOutput: pendingOutput)
        if unsent.count < maxInFlight { pausedAtLimit = false }
    }

    /// Whether one more request may be read, `answered` being already
    /// answered in this read and not yet written.
    func mayRead(answered: Int) -> Bool {
        unsent.count + answered < maxInFlight
    }

    /// Notes that reading stopped at the limit; true the first time in a
    /// stall (to count and log it once).
    mutating func pauseAtLimit() -> Bool {
        defer { pausedAtLimit = true }
        return !pausedAtLimit
    }

    /// Records `bytes` written to the connection, ending `answers` answers.
    mutating func wrote(bytes: Int, answers: Int) {
        unsent.wrote(bytes: bytes, answers: answers)
    }

    /// The connection's output is empty: every answer left.
    mutating func outputDrained() {
        unsent.update(pendingOutput: 0)
    }
}
