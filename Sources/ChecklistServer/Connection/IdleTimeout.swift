/// The idle timeout of one connection (Protocol/SPEC.md section 1),
/// decided at each tick from what the connection reports.
struct IdleTimeout {
    /// What to do about the connection now.
    enum Verdict: Equatable {
        /// Nothing.
        case keep
        /// Answers owed and none of them taken for the whole timeout: the
        /// client stopped reading (an ERROR would not be read either).
        case outputStalled(Duration)
        /// Nothing received for the timeout and nothing owed.
        case idle(Duration)
    }

    /// Nil: never.
    let limit: Duration?

    /// - Parameters:
    ///   - quiet: how long since the connection last received a request or
    ///     was last sent an answer made off the loop.
    ///   - outputWaiting: how long its output has waited untaken, if it has any.
    ///   - pendingOutput: bytes of output not yet taken by the kernel.
    func verdict(quiet: Duration, outputWaiting: Duration?, pendingOutput: Int) -> Verdict {
        guard let limit else { return .keep }
        if let outputWaiting, outputWaiting >= limit { return .outputStalled(limit) }
        guard pendingOutput == 0, quiet >= limit else { return .keep }
        return .idle(limit)
    }
}
