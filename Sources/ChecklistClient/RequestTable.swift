import ChecklistModel
import ChecklistWire

// Unsafe continuations: a checked one allocates a canary per request. Each
// is resumed exactly once because only whoever removes it from the
// `RequestTable` (under the connection's lock) resumes it, and
// `ConnectionCore` resumes one itself only when `register` refused to
// store it.
typealias AnswerContinuation = UnsafeContinuation<ServerMessage, any Error>
typealias BatchContinuation = UnsafeContinuation<[ServerMessage], any Error>

/// Receives the raw answer to a request sent with `ConnectionCore.send(_:onAnswer:)`
/// on the I/O thread: the frame's header and body (valid only during the
/// call), or the error that ended the connection first. Called exactly once.
typealias RawAnswerHandler = @Sendable (Result<(FrameHeader, UnsafeRawBufferPointer), ClientError>) -> Void

/// The requests of one connection that wait for an answer, keyed by request
/// id. Pure book-keeping: no I/O, no locking, no resuming. Methods return the
/// continuation the caller must resume (outside the lock), so every
/// continuation is resumed exactly once: whoever removes it from the table
/// resumes it.
///
/// A request's life: `reserve` (id chosen, frame not yet written) →
/// `register` (continuation stored; the caller then queues the frame) →
/// `deliver` (answer arrived) or `cancel` or `close`.
///
/// The connection keeps this inside its `Mutex`; every method runs under it.
struct RequestTable {
    private enum Slot {
        /// Id chosen, continuation not stored yet.
        case reserved
        /// Cancelled between `reserve` and `register`: never written.
        case cancelledEarly
        /// Written; the caller waits.
        case waiting(AnswerContinuation)
        /// One request of a batch; its answer goes to `batches[key]`.
        case batchMember(key: UInt64, index: Int)
        /// Written, but the caller gave up (cancelled): drop its answer.
        case abandoned
        /// Written; the answer's raw bytes go to this handler.
        case raw(RawAnswerHandler)
    }

    private struct Batch {
        var ids: [UInt32]
        var answers: [ServerMessage?]
        var remaining: Int
        var continuation: BatchContinuation?
        var cancelledEarly = false
    }

    /// What the caller of `register` does next.
    enum Registration {
        /// Write the frame(s).
        case write
        /// Do not write; resume the continuation with this error.
        case fail(any Error)
    }

    /// A continuation to resume, and with what.
    enum Resumption {
        case none
        case answer(AnswerContinuation, Result<ServerMessage, ClientError>)
        case batch(BatchContinuation, Result<[ServerMessage], ClientError>)
        case rawFailure(RawAnswerHandler, ClientError)

        func run() {
            switch self {
            case .none: break
            case .answer(let c, let result): c.resume(with: result.mapError { $0 as any Error })
            case .batch(let c, let result): c.resume(with: result.mapError { $0 as any Error })
            case .rawFailure(let handler, let error): handler(.failure(error))
            }
        }
    }

    private var slots: [UInt32: Slot] = [:]
    private var batches: [UInt64: Batch] = [:]
    private var nextID: UInt32 = 1
    private var nextBatchKey: UInt64 = 1
    /// Set once the connection is closing; no request is accepted after it.
    private(set) var closeReason: ClientError?

    // MARK: Single requests

    /// Chooses a fresh request id (never 0, never one still in use).
    mutating func reserve() throws(ClientError) -> UInt32 {
        if let closeReason { throw closeReason }
        let id = freshID()
        slots[id] = .reserved
        return id
    }

    /// Gives back an id whose frame will not be written.
    mutating func release(_ id: UInt32) {
        slots[id] = nil
    }

    /// Stores the continuation of a reserved id.
    mutating func register(_ id: UInt32, _ continuation: AnswerContinuation) -> Registration {
        switch slots[id] {
        case .reserved?:
            if let closeReason {
                slots[id] = nil
                return .fail(closeReason)
            }
            slots[id] = .waiting(continuation)
            return .write
        case .cancelledEarly?:
            slots[id] = nil
            return .fail(CancellationError())
        default:
            // `close` emptied the table after `reserve`.
            return .fail(closeReason ?? ClientError(.connectionClosed, "the connection is closed"))
        }
    }

    /// The caller's task was cancelled. Returns the continuation to resume
    /// with `CancellationError`, if it was waiting.
    mutating func cancel(_ id: UInt32) -> AnswerContinuation? {
        switch slots[id] {
        case .reserved?:
            slots[id] = .cancelledEarly
            return nil
        case .waiting(let c)?:
            slots[id] = .abandoned
            return c
        default:
            return nil
        }
    }

    // MARK: Batches

    /// Chooses `count` fresh ids for one batch.
    mutating func reserveBatch(count: Int) throws(ClientError) -> (key: UInt64, ids: [UInt32]) {
        if let closeReason { throw closeReason }
        let key = nextBatchKey
        nextBatchKey += 1
        var ids: [UInt32] = []
        ids.reserveCapacity(count)
        for index in 0..<count {
            let id = freshID()
            slots[id] = .batchMember(key: key, index: index)
            ids.append(id)
        }
        batches[key] = Batch(ids: ids, answers: Array(repeating: nil, count: count), remaining: count)
        return (key, ids)
    }

    /// Gives back the ids of a batch that will not be written.
    mutating func releaseBatch(_ key: UInt64) {
        guard let batch = batches.removeValue(forKey: key) else { return }
        for id in batch.ids { slots[id] = nil }
    }

    /// Stores the continuation of a reserved batch.
    mutating func registerBatch(_ key: UInt64, _ continuation: BatchContinuation) -> Registration {
        guard var batch = batches[key] else {
            return .fail(closeReason ?? ClientError(.connectionClosed, "the connection is closed"))
        }
        if batch.cancelledEarly {
            releaseBatch(key)
            return .fail(CancellationError())
        }
        if let closeReason {
            releaseBatch(key)
            return .fail(closeReason)
        }
        batch.continuation = continuation
        batches[key] = batch
        return .write
    }

    /// The batch's task was cancelled. Returns the continuation to resume with
    /// `CancellationError`, if it was waiting; answers still due are dropped.
    mutating func cancelBatch(_ key: UInt64) -> BatchContinuation? {
        guard var batch = batches[key] else { return nil }
        guard let continuation = batch.continuation else {
            batch.cancelledEarly = true
            batches[key] = batch
            return nil
        }
        abandon(batch)
        batches[key] = nil
        return continuation
    }

    // MARK: Answers and closing

    /// An answer (or an undecodable frame) for request `id` arrived.
    /// Answers to ids that are not waiting (abandoned, or never sent) are dropped.
    mutating func deliver(_ id: UInt32, _ result: Result<ServerMessage, ClientError>) -> Resumption {
        switch slots[id] {
        case .waiting(let c)?:
            slots[id] = nil
            return .answer(c, result)
        case .batchMember(let key, let index)?:
            slots[id] = nil
            guard var batch = batches[key], let continuation = batch.continuation else { return .none }
            switch result {
            case .failure(let error):
                abandon(batch)
                batches[key] = nil
                return .batch(continuation, .failure(error))
            case .success(let message):
                batch.answers[index] = message
                batch.remaining -= 1
                if batch.remaining > 0 {
                    batches[key] = batch
                    return .none
                }
                batches[key] = nil
                return .batch(continuation, .success(batch.answers.map { $0! }))
            }
        case .abandoned?:
            slots[id] = nil
            return .none
        case .reserved?, .cancelledEarly?, .raw?, nil:
            // Not written yet, or unknown: a confused server. Nobody waits for it.
            return .none
        }
    }

    /// Chooses a fresh id and stores the raw-answer handler under it, in
    /// one step (for a frame that is already known to be sendable): the
    /// caller writes the frame next.
    mutating func reserveRaw(_ handler: @escaping RawAnswerHandler) throws(ClientError) -> UInt32 {
        if let closeReason { throw closeReason }
        let id = freshID()
        slots[id] = .raw(handler)
        return id
    }

    /// Removes and returns the raw-answer handler waiting for `id`, if the
    /// request was sent with one.
    mutating func takeRawHandler(_ id: UInt32) -> RawAnswerHandler? {
        guard case .raw(let handler)? = slots[id] else { return nil }
        slots[id] = nil
        return handler
    }

    /// Marks the table closed and empties it. Returns every waiting
    /// continuation; the caller fails them with `reason`. Later calls to
    /// `reserve` throw `reason`. Only the first reason is kept.
    mutating func close(_ reason: ClientError) -> [Resumption] {
        if closeReason == nil { closeReason = reason }
        let reason = closeReason!
        var waiting: [Resumption] = []
        for (_, slot) in slots {
            switch slot {
            case .waiting(let c): waiting.append(.answer(c, .failure(reason)))
            case .raw(let handler): waiting.append(.rawFailure(handler, reason))
            default: break
            }
        }
        for (_, batch) in batches {
            if let c = batch.continuation { waiting.append(.batch(c, .failure(reason))) }
        }
        // Reserved ids learn about the close when they try to register.
        slots = slots.filter { if case .reserved = $0.value { return true } else { return false } }
        batches = batches.filter { $0.value.continuation == nil }
        return waiting
    }

    /// Refuses new requests from now on, without touching those in flight.
    mutating func refuseNewRequests(_ reason: ClientError) {
        if closeReason == nil { closeReason = reason }
    }

    // MARK: Private

    private mutating func freshID() -> UInt32 {
        while true {
            let id = nextID
            nextID = nextID == UInt32.max ? 1 : nextID + 1
            if slots[id] == nil { return id }
        }
    }

    private mutating func abandon(_ batch: Batch) {
        for id in batch.ids {
            if case .batchMember? = slots[id] { slots[id] = .abandoned }
        }
    }
}
