import ChecklistStorage
import ChecklistEventLoop
import ChecklistModel
import ChecklistStore
import ChecklistWire

/// Connects one socket to its protocol session: bytes in, frames out. Each
/// frame is found once, here, and handed to the session, whose
/// `RequestOutcome` says what its answer is. The handler also enforces the
/// per-connection load limits (Protocol/SPEC.md section 4.1: requests in
/// flight, idle timeout), times every request for STATS and logs the events
/// of its connection.
///
/// The connection's life (handshake, HELLO, ready, parked on a load,
/// awaiting a transfer, draining, closing) is one state machine,
/// `ProtocolState`, held by the session: the handler tells it each event and carries out on the
/// socket the action it returns. Its other concerns, each with its own
/// state: pipelining (`RequestPipeline`), answers waiting for the log
/// (`AnswerHolder`), snapshot transfers made off the loop
/// (`ConnectionTransfers`, in `ProtocolHandler+Transfers.swift`), requests
/// parked for database reads (`ParkedRequest`, in
/// `ProtocolHandler+ListLoads.swift`) and timeouts (`IdleTimeout`, in
/// `ProtocolHandler+Ticks.swift`).
///
/// Runs only on its connection's event-loop thread.
final class ProtocolHandler: SocketConnectionHandler {
    var session: ProtocolSession
    private let outputHighWater: Int
    let policy: ConnectionPolicy
    let metrics: RequestMetrics
    var pipeline: RequestPipeline
    var durability: AnswerHolder
    var transfers: ConnectionTransfers
    /// The request parked until the database is read for it (PostgreSQL
    /// cache), decoded, with the header it came in, while `session.state` is
    /// `parkedOnLoad`: the requests behind it wait unread in the input.
    var parked: (request: ParkedRequest, header: FrameHeader)?
    let idleTimeout: IdleTimeout
    /// The first byte of a TLS handshake record.
    static let tlsHandshakeRecordType: UInt8 = 0x16
    /// This handler as other threads reach it (a transfer worker, a list
    /// loader): bound to the connection's loop, made at first use and
    /// dropped when the connection closes.
    private var reachableFromOtherThreads: LoopBound<ProtocolHandler>?
    /// The loop's connections waiting for durability, which this one joins
    /// while it holds answers (nil when answers never wait).
    let durabilityWaiters: LoopBound<DurabilityWaiters>?
    /// The loop's group commit, which the PATCHes a read ends with join
    /// (nil: each read applies its own, as when the storage takes no batches).
    private let commitGroup: LoopBound<PatchCommitGroup>?
    /// The read whose staged PATCHes wait for the group commit, if any.
    private var groupCommit: GroupCommitWait?
    /// This handler is among the group commit's members this turn: it
    /// joins once however many reads of the turn end with PATCHes (a
    /// later one settles the earlier one first). Cleared by the group.
    var isInCommitGroup = false

    /// A read's PATCHes staged for the loop's group commit: when the first
    /// came in (`EventLoop.elapsed`), and how many answers the read owes
    /// once they are answered.
    private struct GroupCommitWait {
        var began: Duration
        var answered: Int
    }

    init(dispatcher: RequestDispatcher, limits: Limits, outputHighWater: Int, accessControl: AccessControl? = nil,
         policy: ConnectionPolicy, loopIndex: Int, storage: (any ServerStorage)? = nil,
         commitGroup: LoopBound<PatchCommitGroup>? = nil, durabilityWaiters: LoopBound<DurabilityWaiters>? = nil) {
        durability = AnswerHolder(storage: storage)
        precondition(!durability.isEnabled || durabilityWaiters != nil, "answers wait for durability: the loop's waiters are needed")
        self.durabilityWaiters = durabilityWaiters
        self.commitGroup = commitGroup
        transfers = ConnectionTransfers(workers: dispatcher.snapshots.workers)
        // No answer buffer until there is an answer: an idle connection costs none.
        session = ProtocolSession(dispatcher: dispatcher, limits: limits, accessControl: accessControl)
        pipeline = RequestPipeline(maxInFlight: policy.maxInFlight)
        idleTimeout = IdleTimeout(limit: policy.idleTimeout)
        self.outputHighWater = outputHighWater
        self.policy = policy
        self.metrics = policy.metrics.shard(forLoop: loopIndex)
    }

    func connectionActive(_ connection: SocketConnection) {
        // The parser refuses an over-limit length from its 4-byte prefix, so
        // the input never needs to hold more than one maximal frame.
        connection.maxInputBytes = Int(session.maxFrameBytes) + FrameHeader.size + 64 * 1024
        session.liveSync.handle = connection.handle
        session.peerCertificateSubject = connection.tlsPeerSubject
        switch session.state.activated(overConnectionLimit: connection.isOverConnectionLimit) {
        case .refuseOverLimit:
            policy.log.warn("connection_limit", ["conn": connection.id, "peer": connection.peer,
                                                 "maxConnections": policy.maxConnections])
            sendConnectionError(ChecklistError(.limitExceeded, "server is at its connection limit", field: "connections"),
                                to: connection)
        case .serve where policy.log.isEnabled(.debug):
            policy.log.debug("connection_open", ["conn": connection.id, "peer": connection.peer,
                                                 "tls": connection.tlsVersion?.description ?? "off",
                                                 "subject": connection.tlsPeerSubject ?? "none"])
        default:
            break
        }
    }

    /// The TLS layer closes the connection: say why (Protocol/SPEC.md, Transport).
    func connectionTLSFailed(_ connection: SocketConnection, _ failure: TLSConnectionFailure) {
        session.state.tlsFailed()
        policy.log.warn("tls_failed", ["conn": connection.id, "peer": connection.peer, "reason": failure.reason.name,
                                       "message": failure.message])
    }

    /// A TLS ClientHello on a plaintext port (its first byte is the TLS
    /// handshake record type, 0x16, where a frame's length would start with
    /// 0x00): logged and counted. It is then answered like any frame that
    /// long (ERROR FRAME_TOO_LARGE, then the close), and that plaintext
    /// answer is what tells the TLS client it reached a plaintext port.
    private func noteTLSOnPlainPort(_ connection: SocketConnection) {
        metrics.recordTLSOnPlainPort()
        policy.log.warn("tls_on_plain_port", ["conn": connection.id, "peer": connection.peer])
    }

    /// How far one call of `connectionReadable` got.
    private struct ReadPass {
        var consumed = 0
        /// Requests answered in this pass.
        var answered = 0
        var stopped = false
        /// The last answer must be the connection's last.
        var closeAfterAnswers = false
        /// A request whose answer a transfer worker makes.
        var offLoop: PendingTransfer?
        /// A request parked until the database is read for it.
        var parked: (request: ParkedRequest, header: FrameHeader)?
        /// When the first PATCH staged and not yet applied came in (`EventLoop.elapsed`).
        var stagedSince: Duration?
    }

    /// Most PATCHes applied as one batch: bounds how long one read holds
    /// the store's lock, and the answers it writes past the output budget.
    static let maxPatchBatch = 256

    /// Hands the session one whole frame at a time, so that each request is
    /// timed and counted, stopping at the output budget (back-pressure) or
    /// when `maxInFlight` requests are in flight. Held-back input is offered
    /// again by the connection once its output drains.
    func connectionReadable(_ connection: SocketConnection, _ input: UnsafeRawBufferPointer) -> Int {
        // Input again before the turn's end: what waits is answered first.
        settleGroupCommit(connection)
        // Not while an answer is owed from off the loop, a transfer's or a
        // parked request's (the connection offers no input then;
        // `finishTransfer`, `finishListLoad` have it offered again).
        let clientHello = !connection.isTLS && input.first == Self.tlsHandshakeRecordType
        switch session.state.readable(tlsClientHelloOnPlainPort: clientHello) {
        case .holdInput: return 0
        case .noteTLSOnPlainPortThenRead: noteTLSOnPlainPort(connection)
        default: break
        }
        // Answers held for durability count as output owed: they are
        // back-pressure too, and not yet sent.
        let owed = connection.pendingOutputBytes + durability.heldBytes
        let budget = outputHighWater - owed
        pipeline.inputHeldBack = true
        guard budget > 0 else { return 0 }
        pipeline.beginReading(pendingOutput: owed)
        var pass = ReadPass()
        while !pass.stopped && session.pendingAnswerBytes < budget {
            guard pipeline.mayRead(answered: pass.answered) else {
                holdAtInFlightLimit(connection)
                break
            }
            let rest = UnsafeRawBufferPointer(rebasing: input[pass.consumed...])
            switch FrameParser.next(in: rest, maxFrameBytes: session.maxFrameBytes) {
            case .needMore:
                pass.stopped = true
            case .fatal(let error):
                applyStagedPatches(connection, &pass)
                framingLost(error, connection)
                pass.closeAfterAnswers = true
                pass.stopped = true
            case .frame(let header, let body, let size):
                pass.consumed += size
                let body = UnsafeRawBufferPointer(rebasing: rest[body])
                if session.stagePatch(header, body: body) {
                    // Applied with the PATCHes around it (`applyStagedPatches`).
                    if pass.stagedSince == nil { pass.stagedSince = connection.eventLoop.elapsed }
                    pass.answered += 1
                    if session.stagedPatchCount >= Self.maxPatchBatch { applyStagedPatches(connection, &pass) }
                } else {
                    applyStagedPatches(connection, &pass)
                    handle(header, body: body, connection, &pass)
                }
            }
        }
        if let began = pass.stagedSince, !pass.closeAfterAnswers, let commitGroup {
            // The read ends with PATCHes: they join the loop's other
            // connections' at the turn's end (`finishGroupCommit`), and the
            // read's answers go then, in order.
            pass.stagedSince = nil
            groupCommit = GroupCommitWait(began: began, answered: pass.answered)
            if !isInCommitGroup {
                isInCommitGroup = true
                commitGroup.value.enlist(self, connection)
            }
        } else {
            applyStagedPatches(connection, &pass)
            sendAnswers(count: pass.answered, connection)
        }
        if pass.closeAfterAnswers {
            pass.consumed = input.count
            if session.state.serverCloses() == .close { connection.close() }
        }
        pipeline.inputHeldBack = pass.consumed < input.count
        if let offLoop = pass.offLoop { startTransfer(offLoop, connection) }
        if let parked = pass.parked { startListLoad(parked.request, header: parked.header, connection) }
        return pass.consumed
    }

    /// Handles one request frame and notes what its outcome asks for.
    private func handle(_ header: FrameHeader, body: UnsafeRawBufferPointer, _ connection: SocketConnection,
                        _ pass: inout ReadPass) {
        let began = connection.eventLoop.elapsed
        let logBefore = durability.logPosition
        // Lent at the first SUBSCRIBE, not before: a weak reference to the
        // handler moves its reference counts to a side table, which slows
        // every retain and release of it, on every request.
        if header.type == .subscribe, session.liveSync.gate == nil { session.liveSync.gate = self }
        let outcome = session.receive(header, body: body)
        if let parked = outcome.parked {
            // Nothing answered: the request waits, decoded, for its reads;
            // the requests after it wait unread.
            pass.parked = (parked, header)
            pass.stopped = true
            return
        }
        if let work = outcome.transferWork {
            // Its answer comes from a worker; the requests after it wait.
            pass.offLoop = PendingTransfer(work: work, header: header, began: began, logBefore: logBefore)
            pass.stopped = true
            return
        }
        durability.noteAnswer(outcome, to: header.type, logBefore: logBefore)
        record(header, outcome, took: connection.eventLoop.elapsed - began, connection)
        pass.answered += 1
        if outcome.closesConnection {
            pass.closeAfterAnswers = true
            pass.stopped = true
        }
    }

    /// Applies the PATCHes staged in this read as one batch.
    private func applyStagedPatches(_ connection: SocketConnection, _ pass: inout ReadPass) {
        guard let began = pass.stagedSince else { return }
        pass.stagedSince = nil
        answerStagedPatches(nil, began: began, logBefore: durability.logPosition, connection)
    }

    /// Whether this connection's staged PATCHes wait for the loop's group commit.
    var awaitsGroupCommit: Bool { groupCommit != nil }

    /// Appends the batch of this connection's staged PATCHes, if any goes
    /// to the store, to a group commit's `batches`, through the session in
    /// place (a read of a property of `handler.session` copied the whole
    /// session first, once a connection and turn).
    func appendStagedBatch(to batches: inout [PatchBatch]) {
        session.appendStagedBatch(to: &batches)
    }

    /// The group commit is done: answers the PATCHes it applied for this
    /// connection (`results`, in order), then sends the read's answers.
    /// `logBefore` is the log's position before the group's commits.
    func finishGroupCommit(_ results: ArraySlice<Result<PatchAnswer, ChecklistError>>, logBefore: UInt64?,
                           _ connection: SocketConnection) {
        guard let wait = groupCommit.take() else { return }
        answerStagedPatches(results, began: wait.began, logBefore: logBefore, connection)
        sendAnswers(count: wait.answered, connection)
    }

    /// Something must happen on this connection before the turn's end
    /// (more input, a close, the shutdown, a tick): the PATCHes waiting for
    /// the group commit are applied alone, now, and answered, so that what
    /// follows comes after them. The group then skips this connection.
    func settleGroupCommit(_ connection: SocketConnection) {
        guard let wait = groupCommit.take() else { return }
        answerStagedPatches(nil, began: wait.began, logBefore: durability.logPosition, connection)
        sendAnswers(count: wait.answered, connection)
    }

    /// Answers the staged PATCHes, with `results` from a group commit or,
    /// when nil, applied now as one batch, and notes each answer as
    /// `handle` does one request's: what it waits for in the log (a batch's
    /// commits are appended together, so an answer that waits waits for
    /// the batch's last position), and its count and time in STATS (each
    /// request took as long as its batch).
    private func answerStagedPatches(_ results: ArraySlice<Result<PatchAnswer, ChecklistError>>?,
                                     began: Duration, logBefore: UInt64?, _ connection: SocketConnection) {
        // The batch's answers took the same time: counted together, once.
        // (What the closures capture is only read, or written on an error:
        // a variable written per answer costs a dynamic exclusivity check.)
        let answered = session.stagedPatchCount
        var errors: [ChecklistError.Code] = []
        let took: Duration
        if let results {
            // Applied already, with the loop's other connections' batches.
            let elapsed = connection.eventLoop.elapsed - began
            took = elapsed
            session.answerStagedPatches(results) { outcome in
                if let code = outcome.errorCode { errors.append(code) }
                noteAnswer(outcome, took: elapsed, logBefore: logBefore, connection)
            }
        } else {
            var elapsed: Duration?
            session.applyStagedPatches { outcome in
                let sinceRead = elapsed ?? connection.eventLoop.elapsed - began
                if elapsed == nil { elapsed = sinceRead }
                if let code = outcome.errorCode { errors.append(code) }
                noteAnswer(outcome, took: sinceRead, logBefore: logBefore, connection)
            }
            took = elapsed ?? .zero
        }
        metrics.recordRequests(type: .patch, count: answered, errors: errors, nanos: Self.nanoseconds(took))
    }

    /// One PATCH answered: held behind the log if it must be, logged if slow.
    private func noteAnswer(_ outcome: RequestOutcome, took: Duration, logBefore: UInt64?, _ connection: SocketConnection) {
        durability.noteAnswer(outcome, to: .patch, logBefore: logBefore)
        logIfSlow(.patch, requestID: outcome.requestID ?? FrameHeader.pushRequestID, outcome, took: took, connection)
    }

    /// Framing is lost: the session answers with an ERROR, then the
    /// connection closes.
    private func framingLost(_ error: ChecklistError, _ connection: SocketConnection) {
        _ = session.framingLost(error)
        metrics.recordConnectionError(error.code)
        policy.log.warn("connection_error", ["conn": connection.id, "peer": connection.peer,
                                             "reason": error.code.name, "message": error.message])
    }

    /// Hands the session's answers (`count` of them) to the connection, or
    /// holds them while some must wait for the log.
    func sendAnswers(count: Int, _ connection: SocketConnection) {
        let bytes = session.pendingAnswerBytes
        guard bytes > 0 else { return }
        var held = false
        session.drainAnswers { held = durability.send(&$0, to: connection) }
        if held { releaseHeld(connection) }
        pipeline.wrote(bytes: bytes, answers: count)
    }

    /// This handler as a loop-bound reference, for work that comes back to
    /// the loop from another thread. Dropped when the connection closes.
    func loopBound(_ connection: SocketConnection) -> LoopBound<ProtocolHandler> {
        let me = reachableFromOtherThreads ?? LoopBound(self, eventLoop: connection.eventLoop)
        reachableFromOtherThreads = me
        return me
    }

    /// Back-pressure made visible (debug): the client is not taking its
    /// answers, so its requests wait unread (tests wait for this line).
    func connectionPausedReading(_ connection: SocketConnection) {
        policy.log.debug("read_paused", ["conn": connection.id, "peer": connection.peer,
                                         "pendingBytes": connection.pendingOutputBytes])
    }

    /// The peer sent all it will: what it sent is answered, then the
    /// connection closes (after its output).
    func connectionInputClosed(_ connection: SocketConnection) {
        settleGroupCommit(connection)
        connection.close()
    }

    func connectionClosed(_ connection: SocketConnection) {
        // Read PATCHes are applied, as any request read (their answers go nowhere).
        settleGroupCommit(connection)
        transfers.closed.set()
        session.connectionClosed()
        transfers.awaited = nil
        if let parked = parked.take() { session.dropParked(parked.request) }
        durabilityWaiters?.value.cancel(connection)
        reachableFromOtherThreads = nil  // no cycle left
        let logged = session.state.closed(inputClosed: connection.isInputClosed)
        if connection.pendingOutputBytes > policy.maxOutputBytes {
            policy.log.warn("output_limit", ["conn": connection.id, "peer": connection.peer,
                                             "pendingBytes": connection.pendingOutputBytes,
                                             "maxOutputBytes": policy.maxOutputBytes])
        } else if logged == .logClose(peerReset: true) {
            let reason = connection.pendingInputBytes >= connection.maxInputBytes ? "input_limit" : "reset"
            policy.log.warn("connection_error", ["conn": connection.id, "peer": connection.peer, "reason": reason,
                                                 "unsentBytes": connection.pendingOutputBytes])
        } else if policy.log.isEnabled(.debug) {
            policy.log.debug("connection_close", ["conn": connection.id, "peer": connection.peer])
        }
    }

    private func holdAtInFlightLimit(_ connection: SocketConnection) {
        guard pipeline.pauseAtLimit() else { return }
        metrics.recordInFlightPause()
        if policy.log.isEnabled(.debug) {
            policy.log.debug("in_flight_limit", ["conn": connection.id, "peer": connection.peer,
                                                 "maxInFlight": policy.maxInFlight])
        }
    }

    /// Counts one handled request, with the ERROR code its outcome reports,
    /// and logs it when it was slow.
    func record(_ header: FrameHeader, _ outcome: RequestOutcome, took: Duration, _ connection: SocketConnection) {
        record(header.type, requestID: header.requestID, outcome, took: took, connection)
    }

    /// `record` for a request known by its type and id (one of a batch).
    func record(_ type: MessageType, requestID: UInt32, _ outcome: RequestOutcome, took: Duration,
                _ connection: SocketConnection) {
        metrics.recordRequest(type: type, errorCode: outcome.errorCode, nanos: Self.nanoseconds(took))
        logIfSlow(type, requestID: requestID, outcome, took: took, connection)
    }

    /// Logs `slow_request` for a request that took `policy.slowRequest` or longer.
    private func logIfSlow(_ type: MessageType, requestID: UInt32, _ outcome: RequestOutcome, took: Duration,
                           _ connection: SocketConnection) {
        guard took >= policy.slowRequest else { return }
        policy.log.warn("slow_request", ["conn": connection.id, "peer": connection.peer, "type": type.name,
                                         "request": requestID, "ms": Double(Self.nanoseconds(took) / 1000) / 1000,
                                         "error": outcome.errorCode?.name ?? "none"])
    }

    /// Writes a connection-level ERROR (request id 0).
    func sendConnectionError(_ error: ChecklistError, to connection: SocketConnection) {
        var w = WireWriter()
        var encoder = FrameEncoder()
        encoder.append(ErrorMessage(error), requestID: FrameHeader.pushRequestID, to: &w)
        connection.write(w.bytes)
        pipeline.wrote(bytes: w.count, answers: 0)
        metrics.recordConnectionError(error.code)
    }

    private static func nanoseconds(_ d: Duration) -> UInt64 {
        let (seconds, attoseconds) = d.components
        return UInt64(max(0, seconds)) &* 1_000_000_000 &+ UInt64(max(0, attoseconds) / 1_000_000_000)
    }
}
