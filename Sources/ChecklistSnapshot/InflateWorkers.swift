import ChecklistThreads

/// Threads that inflate the gzip members of snapshots streamed in
/// (`ParallelStreamInflater`, the IMPORT stream), shared by every stream of
/// a server: at most `threadCount` pieces are inflated at once by them,
/// whatever the number of streams. The reader of a stream inflates a piece
/// itself when no worker has started it yet by the time it needs it, so a
/// stream never waits behind another stream's queued pieces.
public final class InflateWorkers: Sendable {
    private let pool: WorkerPool

    /// Threads inflating pieces, at most.
    public var threadCount: Int { pool.threadCount }

    /// `threads` workers (at least 1), started when the first piece comes.
    public init(threads: Int) {
        pool = WorkerPool(threads: threads, name: "checklist-import-inflate")
    }

    /// Queues `piece` for the next free worker; false (the reader then runs
    /// it) once `shutdown()` was called.
    @discardableResult
    func submit(_ piece: InflatePiece) -> Bool {
        pool.submit { piece.runIfPending() }
    }

    /// Stops the workers (pieces still queued are left to their readers)
    /// and joins them. Never from a worker.
    public func shutdown() { pool.shutdown() }
}

/// One stretch of a streamed snapshot's compressed bytes to inflate on a
/// given `InflateStream`: run once, by a worker or by the stream's reader,
/// whichever claims it first; the reader then takes the outcome.
final class InflatePiece: Sendable {
    private enum State {
        case pending
        case running
        /// The outcome, handed over under the lock.
        case done(InflateStream.Outcome)
        case taken
    }

    /// The compressed bytes (a whole DATA chunk) and the part to inflate.
    let bytes: [UInt8]
    let range: Range<Int>
    /// Continues the member the previous piece left open (the stream's
    /// state is the previous piece's), or starts at a member boundary on a
    /// fresh stream.
    let stream: InflateStream
    let continues: Bool
    let cap: Int
    /// Decodes the records of the content from byte `decodeFrom` on, where
    /// a record is thought to start (nil: none is known).
    let decoder: StretchDecoder?
    let decodeFrom: Int?
    private let lock = ConditionLock(State.pending)

    init(bytes: [UInt8], range: Range<Int>, stream: InflateStream, continues: Bool, cap: Int,
         decoder: StretchDecoder? = nil, decodeFrom: Int? = nil) {
        self.bytes = bytes
        self.range = range
        self.stream = stream
        self.continues = continues
        self.cap = cap
        self.decoder = decoder
        self.decodeFrom = decodeFrom
    }

    /// Runs the piece unless another thread claimed it.
    func runIfPending() {
        let claimed = lock.withLock { state -> Bool in
            guard case .pending = state else { return false }
            state = .running
            return true
        }
        guard claimed else { return }
        let outcome = bytes.withUnsafeBytes { raw in stream.run(UnsafeRawBufferPointer(rebasing: raw[range]), cap: cap) }
        if let decoder, let decodeFrom, outcome.failure == nil { outcome.block.decode(from: decodeFrom, with: decoder) }
        lock.withLock { $0 = .done(outcome) }
        lock.broadcast(.progress)
    }

    /// Makes sure the piece will not be run (its outcome is not wanted);
    /// a run already started finishes.
    func cancel() {
        lock.withLock { state in
            if case .pending = state { state = .taken }
        }
    }

    /// The outcome: runs the piece here if no worker started it, or waits
    /// for the worker that did. Once only.
    func outcome() -> InflateStream.Outcome {
        runIfPending()
        return lock.withLock(waitingOn: .progress, until: { state in
            if case .done = state { return true }
            return false
        }) { state, _ -> InflateStream.Outcome in
            guard case .done(let outcome) = state else { preconditionFailure("InflatePiece: outcome taken twice") }
            state = .taken
            return outcome
        }
    }
}
