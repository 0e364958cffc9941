import ChecklistStorage
import ChecklistEventLoop
import ChecklistModel
import ChecklistWire

/// Holds a connection's answers until the commits they report are durable,
/// when the storage makes answers wait (`ServerStorage.answersWaitForDurability`,
/// e.g. `--fsync always`, PostgreSQL): decides which answer waits for which
/// position, holds them in order (`HeldAnswerBytes`: once one waits, all
/// after it wait too), asks for the wake-up, and on release sends each
/// answer as it is or, from what was noted beside it (`HeldAnswer`), in its
/// place `ERROR UNAVAILABLE` (its commit failed) or the rebased PATCH_OK
/// (its commit lost to another node's and was applied again).
///
/// The one place a connection handler reaches the server's storage (its
/// commit positions; the wake-ups go through the loop's
/// `DurabilityWaiters`). When answers need not wait it holds nothing and
/// every answer goes at once.
///
/// Owned by the connection's event-loop thread.
struct AnswerHolder {
    /// The storage, only when answers wait for durability.
    private let storage: (any ServerStorage)?
    private var held = HeldAnswerBytes()
    /// The answers written since the last `send` that must wait (offsets
    /// in the output not yet sent).
    private var waiting: [HeldAnswer] = []

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
    mutating func noteAnswer(_ outcome: RequestOutcome, to request: MessageType, logBefore: UInt64?) {
        guard let storage else { return }
        // A retry of a patch whose own commit is not durable (in flight, or
        // failed and kept): its answer waits for that commit, and is
        // `UNAVAILABLE` while it is failed.
        if let retry = outcome.retried, let original = storage.uncommittedPosition(ofRetry: retry) {
            waiting.append(heldAnswer(outcome, to: request, lsn: original, from: original, retried: retry))
            return
        }
        let last = storage.lastPosition
        // A read showing changes in flight (a PAGE, LISTS) waits for them,
        // all at or before the newest commit, then is checked (`release`).
        if let read = outcome.uncommittedRead {
            waiting.append(heldAnswer(outcome, to: request, lsn: last, from: last + 1, read: read))
            return
        }
        // A retry's answer waits only for a commit still pending: when the
        // newest one failed (on PostgreSQL, lost to another node's), the
        // original was committed apart from it.
        if last != logBefore || (outcome.reportsCommit && storage.commitState(of: last) == .pending) {
            waiting.append(heldAnswer(outcome, to: request, lsn: last, from: (logBefore ?? 0) + 1, retried: outcome.retried))
        }
    }

    /// The `HeldAnswer` of `outcome`'s answer: where its bytes lie, what it
    /// waits for, and what replacing it needs, taken from the outcome (as
    /// the answer was written), never from the bytes.
    private func heldAnswer(_ outcome: RequestOutcome, to request: MessageType, lsn: UInt64, from: UInt64,
                         retried: RetriedPatch? = nil, read: UncommittedRead? = nil) -> HeldAnswer {
        HeldAnswer(start: outcome.answer.lowerBound, end: outcome.answer.upperBound, lsn: lsn, from: from,
                            retried: retried, read: read, request: request,
                            requestID: outcome.requestID ?? FrameHeader.pushRequestID, patched: outcome.patched)
    }

    /// Sends `output` (the answers written since the last call) to
    /// `connection` at once (handing it the array, `SocketConnection.write(taking:)`),
    /// or holds a copy when some must wait (or earlier answers still do).
    /// Returns true when it held: then `release`.
    mutating func send(_ output: inout [UInt8], to connection: SocketConnection) -> Bool {
        guard waiting.isEmpty && held.isEmpty else {
            output.withUnsafeBytes { held.append($0, taking: &waiting) }
            return true
        }
        connection.write(taking: &output)
        return false
    }

    /// Holds `frame` (a push, which waits for nothing itself) behind the
    /// answers held now. Only while `isHolding`.
    mutating func hold(_ frame: [UInt8]) {
        frame.withUnsafeBytes { held.append($0) }
    }

    /// What an answer held for a commit that failed is replaced with, under
    /// its request id (Protocol/SPEC.md section 7, `UNAVAILABLE`): the
    /// storage keeps the failed commit and tries it again, so its outcome
    /// is unknown, not "nothing applied".
    static let outcomeUnknown = ChecklistError(.unavailable,
        "the database failed before this request's commit was confirmed; it may still be applied: "
            + "retry with the same idempotency key to learn its outcome, or read the list")

    /// What `release` sent.
    struct Released {
        /// The position the answers still held wait for; nil when none is held.
        var waitingFor: UInt64?
        /// How many bytes the replacements added to what was held.
        var addedBytes = 0
        /// The requests whose answers were replaced by an ERROR (with its
        /// code), to be counted as answered so (STATS).
        var refused: [(request: MessageType, code: ChecklistError.Code)] = []
    }

    /// Sends the held answers whose commits are durable, and in place of
    /// each answer whose commit failed, `ERROR UNAVAILABLE` (`outcomeUnknown`)
    /// with that answer's request id.
    mutating func release(to connection: SocketConnection) -> Released {
        guard let storage else { return Released() }
        var released = Released()
        held.release(storage.commitState(of:), replace: { answer in
            // A commit refused for good (a quota, counted in the database) says so; others' outcome is unknown.
            let own = answer.from <= answer.lsn ? answer.from...answer.lsn : answer.lsn...answer.lsn
            let why = answer.read != nil ? Self.readUndecided : storage.refusal(in: own) ?? Self.outcomeUnknown
            let error = Self.unavailable(requestID: answer.requestID, why)
            released.addedBytes += error.count - (answer.end - answer.start)
            released.refused.append((answer.request, why.code))
            return error
        }, rewrite: { answer in
            let rewritten: [UInt8]?
            if let read = answer.read {
                rewritten = storage.committedAsRead(read) ? nil : Self.unavailable(requestID: answer.requestID, Self.readRewritten)
                if rewritten != nil { released.refused.append((answer.request, Self.readRewritten.code)) }
            } else if let patched = answer.patched, let retry = answer.retried {
                rewritten = Self.rebased(patched, requestID: answer.requestID,
                                         storage.rebasedAnswer(ofRetry: retry, list: patched.list, revision: patched.revision))
            } else if let patched = answer.patched, answer.from <= answer.lsn {
                rewritten = Self.rebased(patched, requestID: answer.requestID,
                                         storage.rebasedAnswer(in: answer.from...answer.lsn, list: patched.list,
                                                               revision: patched.revision))
            } else {
                rewritten = nil
            }
            guard let rewritten else { return nil }
            released.addedBytes += rewritten.count - (answer.end - answer.start)
            return rewritten
        }) { connection.write($0) }
        released.waitingFor = held.waitingFor
        return released
    }

    /// What replaces a PAGE or LISTS that showed changes in flight when
    /// those were rewritten before they committed (rebased onto another
    /// node's commits, the list reloaded): the read was not what the
    /// database holds at the revisions it names.
    static let readRewritten = ChecklistError(.unavailable,
        "the list changed through another node while this read ran, so it was not what is committed at its revision; read it again")

    /// What replaces a PAGE or LISTS that showed changes in flight whose
    /// commit then failed: they are kept and tried again, so what is
    /// committed at those revisions is not known yet.
    static let readUndecided = ChecklistError(.unavailable,
        "this read showed changes whose commit failed (the database is failing); they may still be committed: read it again later")

    /// The ERROR frame (`error`, by default `outcomeUnknown`) that replaces
    /// an answer held under `requestID`.
    static func unavailable(requestID: UInt32, _ error: ChecklistError = outcomeUnknown) -> [UInt8] {
        var w = WireWriter()
        var encoder = FrameEncoder(compress: false)
        encoder.append(ErrorMessage(error), requestID: requestID, to: &w)
        return w.bytes
    }

    /// The frame that replaces a held PATCH_OK that reported `patched`
    /// under `requestID` when its commit was rebased onto another node's
    /// (`replacement`: `ServerStorage.rebasedAnswer`, asked with what the
    /// PATCH_OK reported): the new PATCH_OK, or the ERROR the patch met on
    /// top, under the same request id; nil when it was committed as it was.
    static func rebased(_ patched: PatchedRevision, requestID: UInt32, _ replacement: RebasedAnswer?) -> [UInt8]? {
        guard let replacement else { return nil }
        var w = WireWriter()
        var encoder = FrameEncoder(compress: false)
        switch replacement {
        case .patched(let revision, let ids):
            encoder.append(PatchOK(list: patched.list, revision: revision, ids: ids), requestID: requestID, to: &w)
        case .refused(let error):
            encoder.append(ErrorMessage(error), requestID: requestID, to: &w)
        }
        return w.bytes
    }
}
