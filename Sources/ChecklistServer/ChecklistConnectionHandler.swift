import ChecklistEventLoop
import ChecklistModel
import ChecklistSnapshot
import ChecklistWire

/// Connects one socket to its protocol session: bytes in, frames out. It
/// also enforces the per-connection load limits (Protocol/SPEC.md section
/// 4.1: requests in flight, idle timeout), times every request for STATS and
/// logs the events of its connection.
///
/// The heavy part of an EXPORT or IMPORT chunk runs on a transfer worker
/// (`TransferWorkers`), not here: meanwhile the connection reads and
/// dispatches nothing more (`Connection.beginAwaitingAnswer`), so its
/// answers keep request order, while the loop goes on serving its other
/// connections.
/// Runs only on its connection's event-loop thread.
final class ChecklistConnectionHandler: ConnectionHandler {
    private var session: ConnectionSession
    private let outputHighWater: Int
    private let policy: ConnectionPolicy
    private let metrics: RequestMetrics
    private var inFlight = InFlightAnswers()
    /// Requests are being held back at `maxInFlight` (counted once per stall).
    private var heldAtInFlightLimit = false
    /// The last `connectionReadable` left input unconsumed: when held answers
    /// go out, it must be offered again (the connection only does that by
    /// itself for output it holds, and held answers are not in it yet).
    private var inputHeldBack = false
    /// The server decided to close (refusal, lost framing, idle timeout,
    /// shutdown): the close is not the peer's error.
    private var closingByServer = false
    /// With `--fsync always`: the storage whose durability answers wait for,
    /// the answers waiting, and how this handler is reached from the
    /// storage's thread when they may go.
    private let storage: (any ServerStorage)?
    private var held = HeldAnswers()
    private var self_: LoopBound<ChecklistConnectionHandler>?
    /// Where snapshot requests' heavy work goes.
    private let workers: TransferWorkers
    /// The snapshot request whose answer a transfer worker is making.
    private var transfer: Transfer?
    /// Set when the connection closes: a transfer job not started yet is skipped.
    private let closed = CancellationFlag()
    /// The server began shutting down while a transfer's answer was being
    /// made: the goodbye follows that answer.
    private var goodbyeAfterTransfer = false
    /// The server began shutting down while answers waited for the log
    /// (`--fsync always`): the goodbye follows them.
    private var goodbyeAfterHeld = false
    /// When the last answer made off the loop was written: the idle timeout
    /// counts from then too (the client could send nothing while it waited).
    private var transferAnsweredAt: ContinuousClock.Instant?

    /// A request whose answer is with a transfer worker.
    private struct Transfer {
        let work: SnapshotWork
        let header: FrameHeader
        let began: ContinuousClock.Instant
        /// The log's end before the request (`--fsync always`).
        let logBefore: UInt64?
    }

    init(dispatcher: RequestDispatcher, limits: Limits, outputHighWater: Int, accessControl: AccessControl? = nil,
         policy: ConnectionPolicy, loopIndex: Int, storage: (any ServerStorage)? = nil) {
        self.storage = storage?.answersWaitForDurability == true ? storage : nil
        workers = dispatcher.snapshots.workers
        session = ConnectionSession(dispatcher: dispatcher, limits: limits, accessControl: accessControl)
        // No answer buffer until there is an answer: an idle connection costs none.
        session.output = WireWriter(capacity: 0)
        self.outputHighWater = outputHighWater
        self.policy = policy
        self.metrics = policy.metrics.shard(forLoop: loopIndex)
    }

    func connectionActive(_ connection: Connection) {
        // The parser refuses an over-limit length from its 4-byte prefix, so
        // the input never needs to hold more than one maximal frame.
        connection.maxInputBytes = Int(session.maxFrameBytes) + FrameHeader.size + 64 * 1024
        session.liveSync.handle = connection.handle
        if connection.isOverConnectionLimit {
            closingByServer = true
            policy.log.warn("connection_limit", ["conn": connection.id, "peer": connection.peer,
                                                 "maxConnections": policy.maxConnections])
            sendConnectionError(ChecklistError(.limitExceeded, "server is at its connection limit", field: "connections"),
                                to: connection)
        } else if policy.log.isEnabled(.debug) {
            policy.log.debug("connection_open", ["conn": connection.id, "peer": connection.peer])
        }
    }

    /// Feeds the session one whole frame at a time, so that each request is
    /// timed and counted, stopping at the output budget (back-pressure) or
    /// when `maxInFlight` requests are in flight. Held-back input is offered
    /// again by the connection once its output drains.
    func connectionReadable(_ connection: Connection, _ input: UnsafeRawBufferPointer) -> Int {
        // Not while a transfer's answer is awaited (the connection offers no
        // input then; `finishTransfer` has it offered again).
        guard transfer == nil else { return 0 }
        // Answers held for durability count as output owed: they are
        // back-pressure too, and not yet sent.
        let owed = connection.pendingOutputBytes + held.count
        let budget = outputHighWater - owed
        inputHeldBack = true
        guard budget > 0 else { return 0 }
        inFlight.update(pendingOutput: owed)
        var barriers: [(end: Int, lsn: UInt64)] = []
        if inFlight.count < policy.maxInFlight { heldAtInFlightLimit = false }
        var consumed = 0
        var answered = 0
        var action = ConnectionSession.Action.continue
        var offLoop: Transfer?
        frames: while session.output.count < budget {
            guard inFlight.count + answered < policy.maxInFlight else {
                holdAtInFlightLimit(connection)
                break
            }
            let rest = UnsafeRawBufferPointer(rebasing: input[consumed...])
            switch FrameParser.next(in: rest, maxFrameBytes: session.maxFrameBytes) {
            case .needMore:
                break frames
            case .fatal(let error):
                (_, action) = session.receive(rest, outputBudget: .max)
                metrics.recordConnectionError(error.code)
                policy.log.warn("connection_error", ["conn": connection.id, "peer": connection.peer,
                                                     "reason": error.code.name, "message": error.message])
                consumed = input.count
                break frames
            case .frame(let header, _, let size):
                let answerStart = session.output.count
                let began = ContinuousClock.now
                let logBefore = storage?.lastPosition
                let (_, next) = session.receive(UnsafeRawBufferPointer(rebasing: rest[..<size]), outputBudget: .max)
                if let work = session.takeSnapshotWork() {
                    // Its answer comes from a worker; the requests after it wait.
                    offLoop = Transfer(work: work, header: header, began: began, logBefore: logBefore)
                    consumed += size
                    break frames
                }
                let took = ContinuousClock.now - began
                // The log moved while this request ran: its answer (and all
                // after it) waits until the log is durable that far. A commit
                // of another connection meanwhile only makes it wait longer.
                if let storage, storage.lastPosition != logBefore {
                    barriers.append((session.output.count, storage.lastPosition))
                } else if let storage, header.type == .patch, storage.commitState(of: storage.lastPosition) != .durable,
                          session.output.count > answerStart + 4,
                          session.output.bytes[answerStart + 4] == MessageType.patchOK.rawValue {
                    // A PATCH_OK that logged nothing answers a retry from the
                    // idempotency memory: the original's change (at or before
                    // the log's end) may not be durable yet, so wait for it too.
                    barriers.append((session.output.count, storage.lastPosition))
                }
                record(header, answerStart: answerStart, took: took, connection)
                consumed += size
                answered += 1
                if next == .closeAfterFlush {
                    action = next
                    consumed = input.count
                    break frames
                }
            }
        }
        sendOutput(barriers: barriers, answers: answered, connection)
        if action == .closeAfterFlush {
            closingByServer = true
            connection.close()
        }
        inputHeldBack = consumed < input.count
        if let offLoop { startTransfer(offLoop, connection) }
        return consumed
    }

    /// Hands `session.output` to the connection, or to the held answers when
    /// some must wait for the log (`barriers`, or earlier answers waiting).
    private func sendOutput(barriers: [(end: Int, lsn: UInt64)], answers: Int, _ connection: Connection) {
        guard session.output.count > 0 else { return }
        let bytes = session.output.count
        if barriers.isEmpty && held.isEmpty {
            session.output.bytes.withUnsafeBytes { connection.write($0) }
        } else {
            session.output.bytes.withUnsafeBytes { held.append($0, barriers: barriers) }
            releaseHeld(connection)
        }
        session.output.reset()
        inFlight.wrote(bytes: bytes, answers: answers)
    }

    // MARK: Transfers

    /// Runs `transfer`'s work on a worker; its answer comes back to this
    /// loop (`finishTransfer`). Meanwhile the connection reads nothing.
    private func startTransfer(_ transfer: Transfer, _ connection: Connection) {
        self.transfer = transfer
        connection.beginAwaitingAnswer()
        let me = loopBound(connection)
        let handle = connection.handle
        let run = transfer.work.run
        let closed = self.closed
        let queued = workers.submit {
            guard !closed.isSet else { return }
            let outcome = run()
            // Dropped if the connection closed meanwhile (or the loop
            // stopped): an import's place is freed with its stream.
            handle.execute { connection in me.value.finishTransfer(outcome, connection) }
        }
        if !queued {
            finishTransfer(.failure(ChecklistError(.shuttingDown, "the server is shutting down")), connection)
        }
    }

    /// Writes the answer a worker made, then lets the connection read the
    /// requests behind it again (or close, if the server is stopping).
    private func finishTransfer(_ outcome: SnapshotWork.Outcome, _ connection: Connection) {
        guard let transfer else { return }
        self.transfer = nil
        defer { connection.endAwaitingAnswer() }
        guard connection.isOpen else { return }
        let answerStart = session.output.count
        session.completeSnapshotWork(transfer.work, outcome)
        // IMPORT END logged the import: its answer waits until that is durable.
        var barriers: [(end: Int, lsn: UInt64)] = []
        if transfer.work.kind == .importEnd, let storage, storage.lastPosition != transfer.logBefore {
            barriers.append((session.output.count, storage.lastPosition))
        }
        let now = ContinuousClock.now
        record(transfer.header, answerStart: answerStart, took: now - transfer.began, connection)
        sendOutput(barriers: barriers, answers: 1, connection)
        transferAnsweredAt = connection.eventLoop.now
        if goodbyeAfterTransfer {
            goodbyeAfterTransfer = false
            sayGoodbye(connection)
        }
    }

    /// This handler as a loop-bound reference, for work that comes back to
    /// the loop from another thread. Dropped when the connection closes.
    private func loopBound(_ connection: Connection) -> LoopBound<ChecklistConnectionHandler> {
        let me = self_ ?? LoopBound(self, eventLoop: connection.eventLoop)
        self_ = me
        return me
    }

    /// Back-pressure made visible (debug): the client is not taking its
    /// answers, so its requests wait unread (tests wait for this line).
    func connectionPausedReading(_ connection: Connection) {
        policy.log.debug("read_paused", ["conn": connection.id, "peer": connection.peer,
                                         "pendingBytes": connection.pendingOutputBytes])
    }

    /// The goodbye of Protocol/SPEC.md section 1: after the answers already
    /// owed, ERROR SHUTTING_DOWN with request id 0; the server then closes.
    func connectionShuttingDown(_ connection: Connection) {
        closingByServer = true
        // A request already read is still being answered: the goodbye follows
        // its answer (the connection's close waits for it).
        if transfer != nil {
            goodbyeAfterTransfer = true
            return
        }
        sayGoodbye(connection)
    }

    /// Sends the goodbye after every answer owed: at once, or, when answers
    /// still wait for the log to be durable, once they have gone (the
    /// connection's close waits for that, up to the shutdown deadline).
    private func sayGoodbye(_ connection: Connection) {
        guard held.isEmpty else {
            if !goodbyeAfterHeld {
                goodbyeAfterHeld = true
                connection.beginAwaitingAnswer()
            }
            return
        }
        sendConnectionError(ChecklistError(.shuttingDown, "the server is shutting down"), to: connection)
    }

    /// The idle timeout (Protocol/SPEC.md section 1): nothing received for
    /// `idleTimeout` and nothing owed to the client.
    func connectionTick(_ connection: Connection, now: ContinuousClock.Instant) {
        // An answer is owed: neither idle nor to be cut off before it is sent
        // (a revoked token is acted on at the first tick after it).
        guard transfer == nil else { return }
        let quiet = now - max(connection.lastInputAt, transferAnsweredAt ?? connection.lastInputAt)
        // A quiet connection keeps no answer buffer (thousands of idle
        // connections should cost no buffer memory); the next answer makes one.
        if quiet >= .seconds(1) && session.output.count == 0 && session.output.bytes.capacity > 0 {
            session.output = WireWriter(capacity: 0)
        }
        // Access control: a connection whose token a reload revoked is closed
        // within a tick, even one that only listens for pushes.
        if connection.isOpen && session.tokenRevoked() {
            closingByServer = true
            sendConnectionError(ChecklistError(.notAuthenticated, "the token of this connection was revoked"), to: connection)
            connection.close()
            return
        }
        guard let idle = policy.idleTimeout, connection.isOpen else { return }
        if let waiting = connection.outputWaitingSince, now - waiting >= idle {
            // Answers owed and none of them taken for the whole timeout: the
            // client stopped reading. An ERROR would not be read either.
            closingByServer = true
            metrics.recordIdleClose()
            policy.log.warn("output_stalled", ["conn": connection.id, "peer": connection.peer,
                                               "pendingBytes": connection.pendingOutputBytes,
                                               "idleTimeoutSeconds": Self.seconds(idle)])
            connection.abort()
            return
        }
        guard connection.pendingOutputBytes == 0, quiet >= idle else { return }
        inFlight.update(pendingOutput: 0)
        closingByServer = true
        metrics.recordIdleClose()
        policy.log.info("idle_timeout", ["conn": connection.id, "peer": connection.peer,
                                         "idleTimeoutSeconds": Self.seconds(idle)])
        sendConnectionError(ChecklistError(.limitExceeded, "no request for \(Self.seconds(idle)) seconds: closing",
                                           field: "idleTimeout"), to: connection)
        connection.close()
    }

    func connectionClosed(_ connection: Connection) {
        closed.set()
        session.connectionClosed()
        transfer = nil
        storage?.cancelNotification(waiter: connection.id)
        self_ = nil  // the loop-bound reference to this handler: no cycle left
        if connection.pendingOutputBytes > policy.maxOutputBytes {
            policy.log.warn("output_limit", ["conn": connection.id, "peer": connection.peer,
                                             "pendingBytes": connection.pendingOutputBytes,
                                             "maxOutputBytes": policy.maxOutputBytes])
        } else if !closingByServer && !connection.isInputClosed {
            let reason = connection.pendingInputBytes >= connection.maxInputBytes ? "input_limit" : "reset"
            policy.log.warn("connection_error", ["conn": connection.id, "peer": connection.peer, "reason": reason,
                                                 "unsentBytes": connection.pendingOutputBytes])
        } else if policy.log.isEnabled(.debug) {
            policy.log.debug("connection_close", ["conn": connection.id, "peer": connection.peer])
        }
    }

    // MARK: Private

    /// Sends the held answers the log's durable position allows; if some
    /// still wait, asks to be woken on this loop when the log gets there.
    private func releaseHeld(_ connection: Connection) {
        guard let storage else { return }
        guard held.release(storage.commitState(of:), { connection.write($0) }) else {
            // A commit whose answer is held failed: that answer must never
            // be sent, nor any after it (the client retries).
            closingByServer = true
            connection.abort()
            return
        }
        if goodbyeAfterHeld && held.isEmpty && connection.isOpen {
            goodbyeAfterHeld = false
            sendConnectionError(ChecklistError(.shuttingDown, "the server is shutting down"), to: connection)
            connection.endAwaitingAnswer()
            return
        }
        // Requests held back (in-flight limit, output budget) may go on now.
        if inputHeldBack { connection.offerInputAgain() }
        guard let lsn = held.waitingFor, connection.isOpen else { return }
        let me = loopBound(connection)
        let handle = connection.handle
        storage.notify(waiter: connection.id, at: lsn) {
            _ = handle.execute { connection in me.value.releaseHeld(connection) }
        }
    }

    private func holdAtInFlightLimit(_ connection: Connection) {
        guard !heldAtInFlightLimit else { return }
        heldAtInFlightLimit = true
        metrics.recordInFlightPause()
        if policy.log.isEnabled(.debug) {
            policy.log.debug("in_flight_limit", ["conn": connection.id, "peer": connection.peer,
                                                 "maxInFlight": policy.maxInFlight])
        }
    }

    /// Counts one handled request, with the ERROR code its answer carries
    /// (read from the answer frame appended at `answerStart`), and logs it
    /// when it was slow.
    private func record(_ header: FrameHeader, answerStart: Int, took: Duration, _ connection: Connection) {
        var code: ChecklistError.Code?
        if session.output.count > answerStart + FrameHeader.size
            && session.output.bytes[answerStart + 4] == MessageType.error.rawValue {
            code = Self.errorCode(in: session.output.bytes, at: answerStart + FrameHeader.size)
        }
        let nanos = Self.nanoseconds(took)
        metrics.recordRequest(type: header.type, errorCode: code, nanos: nanos)
        if took >= policy.slowRequest {
            policy.log.warn("slow_request", ["conn": connection.id, "peer": connection.peer, "type": header.type.name,
                                             "request": header.requestID, "ms": Double(nanos / 1000) / 1000,
                                             "error": code?.name ?? "none"])
        }
    }

    /// Writes a connection-level ERROR (request id 0).
    private func sendConnectionError(_ error: ChecklistError, to connection: Connection) {
        var w = WireWriter()
        var encoder = FrameEncoder()
        encoder.append(ErrorMessage(error), requestID: FrameHeader.pushRequestID, to: &w)
        connection.write(w.bytes)
        inFlight.wrote(bytes: w.count, answers: 0)
        metrics.recordConnectionError(error.code)
    }

    /// The `code` varint at the start of an (uncompressed) ERROR body.
    private static func errorCode(in bytes: [UInt8], at start: Int) -> ChecklistError.Code? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var i = start
        while i < bytes.count && shift < 64 {
            value |= UInt64(bytes[i] & 0x7F) << shift
            if bytes[i] & 0x80 == 0 { return ChecklistError.Code(rawValue: UInt16(truncatingIfNeeded: value)) }
            shift += 7
            i += 1
        }
        return nil
    }

    private static func nanoseconds(_ d: Duration) -> UInt64 {
        let (seconds, attoseconds) = d.components
        return UInt64(max(0, seconds)) &* 1_000_000_000 &+ UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    private static func seconds(_ d: Duration) -> String { ChecklistServer.seconds(d) }
}
