import ChecklistStorage
import ChecklistModel
import ChecklistStore
import ChecklistWire

/// The protocol state of one connection, free of I/O: it is handed one
/// frame at a time (the connection finds them), appends each answer to its
/// output and returns a `RequestOutcome` saying what the answer is and what
/// the connection must do. The socket layer carries that out.
///
/// The connection's life is one state machine, `state`: the session moves
/// it when it accepts a HELLO; the handler tells it the connection's other
/// events (`ProtocolHandler`) and carries out the actions it returns.
///
/// Owned by the connection's event-loop thread; not shared.
struct ProtocolSession {
    /// Where the connection is in its life (`ProtocolState`).
    var state = ProtocolState()
    /// The answers owed, written by every request handled here.
    private var answers = AnswerWriter()
    private let dispatcher: RequestDispatcher
    private let limits: Limits
    /// The server's tokens; nil when it runs without access control.
    private let accessControl: AccessControl?
    /// The namespace of every request: `.default` without access control,
    /// else the one the HELLO token opened.
    private(set) var namespace: Namespace = .default
    /// The accepted credential, the generation of the tokens and keys it
    /// was last checked against, and until when it holds (a signed token's
    /// expiry; access control only).
    private var authentication: (credential: AccessControl.Credential, generation: UInt64, validUntil: Double?)?
    /// The subject of the client's verified TLS certificate, if any: with
    /// access control, a HELLO without a token is looked up by it.
    var peerCertificateSubject: String?
    /// Why the connection lost its access after the handshake, once it did.
    private var lostAccess: AccessRefusal?
    /// HELLOs refused for a missing or unknown token.
    private var failedAuthentications = 0
    /// Set by a request whose answer must be the connection's last.
    private var closeRequested = false
    /// SUBSCRIBE, UNSUBSCRIBE and CHANGES_SINCE, with this connection's
    /// subscriptions. The handler sets its `handle` once the connection is active.
    var liveSync: LiveSyncSession
    /// EXPORT and IMPORT, with this connection's running transfers.
    private var snapshots: SnapshotSession
    /// The heavy part of the request being handled, left for a transfer worker.
    private var snapshotWork: SnapshotWork?
    /// What the answer just written waits for (`RequestDispatcher.Waits`).
    private var waits = RequestDispatcher.Waits.none
    /// PATCHes read and not yet applied (`stagePatch`, `applyStagedPatches`).
    private var staged = StagedPatches()

    /// The largest frame this session accepts.
    var maxFrameBytes: UInt32 { limits.maxFrameBytes }

    /// Bytes of answers written and not yet drained.
    var pendingAnswerBytes: Int { answers.count }

    init(dispatcher: RequestDispatcher, limits: Limits, accessControl: AccessControl? = nil) {
        self.dispatcher = dispatcher
        self.limits = limits
        self.accessControl = accessControl
        self.liveSync = LiveSyncSession(hub: dispatcher.liveSync, store: dispatcher.store)
        self.snapshots = SnapshotSession(transfers: dispatcher.snapshots, store: dispatcher.store, limits: limits)
    }

    /// Handles one whole frame (found by `FrameParser`): decodes its
    /// request, answers it and says what the answer is. A request whose
    /// answer a transfer worker makes returns that work instead
    /// (`transferWork`); give this session no request before its outcome
    /// came back to `completeSnapshotWork`.
    ///
    /// A request that needs database reads first (lists not in memory,
    /// `ListCache`) returns itself, decoded, as `parked` with nothing
    /// answered: give this session no request before it came back to
    /// `resume` with the reads' outcome.
    mutating func receive(_ header: FrameHeader, body: UnsafeRawBufferPointer) -> RequestOutcome {
        let start = answers.count
        let parked = handle(header: header, body: body)
        return outcome(since: start, parked: parked)
    }

    /// Handles a request `receive` parked, now that the database reads it
    /// waited for are done (`loaded`): answers it with the reads' error, or
    /// handles it as `receive` would, with what was read. It is not parked
    /// for the same lists again, but may be for the stored changes or the
    /// key it turns out to need (`parked`). Gives back the parked pins.
    mutating func resume(_ parked: ParkedRequest, loaded: ListLoadOutcome) -> RequestOutcome {
        let start = answers.count
        defer { dispatcher.cache?.unpin(parked.pins) }
        if let failure = loaded.error {
            answers.fail(failure, requestID: parked.requestID)
            return outcome(since: start, parked: nil)
        }
        let again = handleReady(parked.request, requestID: parked.requestID, parkedBefore: true,
                                stored: loaded.storedChanges)
        return outcome(since: start, parked: again)
    }

    /// The outcome of the request handled since the answers' end was
    /// `start`, with its transfer work and what its answer waits for.
    private mutating func outcome(since start: Int, parked: ParkedRequest?) -> RequestOutcome {
        var outcome = outcome(since: start)
        if snapshotWork != nil { outcome.kind = nil }
        outcome.setWaiting(transferWork: snapshotWork, parked: parked, retried: waits.retried,
                           uncommittedRead: waits.uncommittedRead)
        snapshotWork = nil
        waits = .none
        return outcome
    }

    /// The list cache, when the storage loads rows on first use.
    var listCache: ListCache? { dispatcher.cache }

    // MARK: PATCHes in batches

    /// Stages the PATCH in `header`/`body` (a whole frame) for
    /// `applyStagedPatches`, when the server batches PATCHes and this
    /// connection is past its HELLO and holds its access; false, staging
    /// nothing, for any other frame: apply what is staged, then give it to
    /// `receive`. A PATCH that does not decode, or comes over the rate
    /// limit, is staged with its refusal, answered in its place.
    mutating func stagePatch(_ header: FrameHeader, body: UnsafeRawBufferPointer) -> Bool {
        guard header.type == .patch, dispatcher.batchesPatches, state.hasAcceptedHello, accessLost() == nil else {
            return false
        }
        // Decoded as `Request.decode` decodes a PATCH, its operations
        // straight into the batch's array.
        let decoded: Patch.Head
        do {
            decoded = try FrameBody.withMessageBytes(header: header, body: body, maxFrameBytes: limits.maxFrameBytes) {
                (r) throws(ChecklistError) in try staged.decode(from: &r)
            }
        } catch {
            staged.refuse(error, requestID: header.requestID)
            return true
        }
        if let limiter = dispatcher.rateLimiter, let wait = limiter.take(namespace) {
            staged.drop(decoded.ops)
            staged.refuse(Self.rateLimited(limiter, wait: wait), requestID: header.requestID)
            return true
        }
        staged.add(decoded, requestID: header.requestID)
        return true
    }

    /// Requests staged by `stagePatch` and not yet applied.
    var stagedPatchCount: Int { staged.count }

    /// Applies the staged PATCHes as one batch (`Store.patch(in:batch:into:)`)
    /// and answers each in order, exactly as `receive` would have one after
    /// the other, handing `each` every answer's outcome as `receive` returns it.
    mutating func applyStagedPatches(_ each: (RequestOutcome) -> Void) {
        guard !staged.isEmpty else { return }
        staged.seal()
        dispatcher.store.patch(in: namespace, batch: staged.requests, into: &staged.results)
        answerStagedPatches(staged.results[...], each)
    }

    /// Appends the staged PATCHes that go to the store, in this
    /// connection's namespace, to `batches`, for a commit of several
    /// connections' batches together (`Store.patch(batches:into:)`);
    /// nothing when none does (none is staged, or each was refused before
    /// the store). Called on the handler's stored session, in place.
    mutating func appendStagedBatch(to batches: inout [PatchBatch]) {
        guard !staged.requests.isEmpty else { return }
        staged.seal()
        batches.append(PatchBatch(namespace: namespace, requests: staged.requests))
    }

    /// How many staged PATCHes go to the store (`appendStagedBatch`'s batch).
    var stagedRequestCount: Int { staged.requests.count }

    /// Answers the staged PATCHes in order with what the store made of
    /// `appendStagedBatch`'s batch (`results`, one per request in it, or
    /// none when there was no batch), as `applyStagedPatches` does, and
    /// forgets them.
    mutating func answerStagedPatches(_ results: ArraySlice<Result<PatchAnswer, ChecklistError>>,
                                      _ each: (RequestOutcome) -> Void) {
        precondition(results.count == staged.requests.count, "one result per staged request")
        var next = results.startIndex
        var request = 0
        for entry in staged.entries {
            let start = answers.count
            if let refusal = entry.refusal {
                answers.fail(refusal, requestID: entry.requestID)
            } else {
                // Read in place: a copy of the request would retain and release its operations.
                waits = dispatcher.answer(results[next], list: staged.requests[request].list,
                                          key: staged.requests[request].idempotencyKey,
                                          namespace: namespace, requestID: entry.requestID, into: &answers)
                next += 1
                request += 1
            }
            each(outcome(since: start, parked: nil))
        }
        staged.removeAll()
    }

    /// The refusal of a request over the namespace's rate, `wait` ms before the next may come.
    private static func rateLimited(_ limiter: RateLimiter, wait: UInt64) -> ChecklistError {
        ChecklistError(.rateLimited, "over \(limiter.settings.requestsPerSecond) requests a second; retry in \(wait) ms",
                       retryAfterMilliseconds: wait)
    }

    /// Framing is lost (the parser's fatal error): answers it with request
    /// id 0; the connection must close after it.
    mutating func framingLost(_ error: ChecklistError) -> RequestOutcome {
        let start = answers.count
        answers.fail(error, requestID: FrameHeader.pushRequestID)
        var outcome = outcome(since: start)
        outcome.closesConnection = true
        return outcome
    }

    /// Appends the answer `outcome` of `work` (from a `receive` outcome's
    /// `transferWork`), made by a transfer worker.
    mutating func completeSnapshotWork(_ work: SnapshotWork, _ result: SnapshotWork.Outcome) -> RequestOutcome {
        let start = answers.count
        snapshots.complete(work, result, into: &answers)
        return outcome(since: start)
    }

    /// Hands the answers written so far to `send` (which may take the
    /// array, `AnswerWriter.drain`), then forgets them.
    mutating func drainAnswers(_ send: (inout [UInt8]) -> Void) {
        answers.drain(send)
    }

    /// Gives the answer buffer back if nothing is owed, and the staging
    /// arrays if nothing is staged (idle connections).
    mutating func releaseIdleBuffers() {
        answers.releaseBuffer()
        staged.releaseStorage()
    }

    private func outcome(since start: Int) -> RequestOutcome {
        let answered = start < answers.count
        return RequestOutcome(answer: start..<answers.count, kind: answered ? answers.lastKind : nil,
                              errorCode: answered ? answers.lastErrorCode : nil,
                              requestID: answered ? answers.lastRequestID : nil,
                              patched: answered ? answers.lastPatched : nil, closesConnection: closeRequested)
    }

    /// Gives back the pins of a parked request that will not be resumed
    /// (its connection closed, or the server is shutting down).
    func dropParked(_ parked: ParkedRequest) {
        dispatcher.cache?.unpin(parked.pins)
    }

    /// The connection closed: ends its transfers.
    mutating func connectionClosed() {
        snapshotWork = nil
        snapshots.endTransfers()
        liveSync.connectionClosed()
    }

    /// Decodes and handles one frame; returns the request if it must wait
    /// for database reads (nothing answered).
    private mutating func handle(header: FrameHeader, body: UnsafeRawBufferPointer) -> ParkedRequest? {
        // Before HELLO_OK the server has not announced COMPRESSION (Protocol/SPEC.md section 1).
        if !state.hasAcceptedHello, header.flags.contains(.compressed) {
            answers.fail(.badField("flags", "a compressed body before HELLO_OK"), requestID: header.requestID)
            return nil
        }
        let request: Request
        do {
            request = try Request.decode(header: header, body: body, maxFrameBytes: limits.maxFrameBytes)
        } catch {
            if !state.hasAcceptedHello, accessControl != nil, header.type == .hello,
               error.code == .limitExceeded, error.field == "token" {
                // With access control an over-long token is a refused attempt (Protocol/SPEC.md section 2.1).
                failedAuthentication(AccessRefusal(.init(.tooLarge), "the token is longer than \(Hello.maxTokenBytes) bytes"),
                                     requestID: header.requestID)
                return nil
            }
            answers.fail(error, requestID: header.requestID)
            return nil
        }
        switch (state.hasAcceptedHello, request) {
        case (false, .hello(let hello)):
            handshake(hello, requestID: header.requestID)
        case (false, _):
            answers.fail(ChecklistError(.helloRequired, "send HELLO before \(request.type)"), requestID: header.requestID)
        case (true, .hello):
            answers.fail(ChecklistError(.badState, "HELLO was already accepted on this connection"), requestID: header.requestID)
        case (true, _):
            return handleReady(request, requestID: header.requestID, parkedBefore: false, stored: nil)
        }
        return nil
    }

    /// Handles a decoded request of a ready connection; returns it, with
    /// the reads it waits for and the pins that keep its lists, if it must
    /// wait for the database first (nothing answered).
    ///
    /// - Parameters:
    ///   - parkedBefore: the request was parked for database reads once
    ///     already: it is not parked for lists or revisions again.
    ///   - stored: the stored changes read for it while it was parked.
    private mutating func handleReady(_ request: Request, requestID: UInt32, parkedBefore: Bool,
                                      stored: StoredChanges?) -> ParkedRequest? {
        if let lost = accessLost() {
            refuse(lost.message, requestID: requestID, close: true)
            return nil
        }
        // A request resumed after its database reads was counted when it came.
        if !parkedBefore, let limiter = dispatcher.rateLimiter, let wait = limiter.take(namespace) {
            answers.fail(Self.rateLimited(limiter, wait: wait), requestID: requestID)
            return nil
        }
        guard let cache = dispatcher.cache else {
            dispatch(request, requestID: requestID)
            return nil
        }
        let needed = request.listsNeedingRows { dispatcher.store.lists(in: namespace).map(\.id) }
        guard !needed.isEmpty else {
            dispatch(request, requestID: requestID)
            return nil
        }
        let pins = cache.pin(needed, in: namespace)
        func park(_ load: ListLoadRequest) -> ParkedRequest {
            ParkedRequest(request: request, requestID: requestID, pins: pins.pinned, load: load)
        }
        if parkedBefore {
            // Loaded once for this request and still missing: say so rather than park again.
            guard pins.missing.isEmpty else {
                cache.unpin(pins.pinned)
                answers.fail(ChecklistError(.unavailable, "the list could not be loaded; try again"), requestID: requestID)
                return nil
            }
        } else {
            let ahead = revisionsAhead(of: request)
            guard pins.missing.isEmpty && ahead.isEmpty else {
                return park(ListLoadRequest(namespace: namespace, lists: pins.missing, catchUp: ahead))
            }
        }
        if let read = dispatch(request, requestID: requestID, stored: stored, looksUpRefusedKeys: !parkedBefore) {
            return park(ListLoadRequest(namespace: namespace, lists: [], storedChanges: read))
        } else if let key = waits.refusedKey {
            // Another node may have answered this key (a retry sent
            // here): its answer, not a refusal of this node's, is owed.
            return park(ListLoadRequest(namespace: namespace, lists: [], keyLookUp: key))
        }
        cache.unpin(pins.pinned)
        return nil
    }

    /// The revisions `request` names that this node has not seen yet.
    private func revisionsAhead(of request: Request) -> [ListID: Revision] {
        let store = dispatcher.store
        let namespace = namespace
        return request.revisionsAhead(held: { list in try? store.summary(in: namespace, list: list).revision },
                                      committed: { list, cached in
                                          dispatcher.liveSync?.currentRevision(of: list, cached: cached) ?? cached
                                      })
    }

    /// Answers a request of a ready connection whose lists are in memory;
    /// or, for a CHANGES_SINCE past the node's feed with the storage's
    /// list cache, returns the read of the stored changes that answers it
    /// (nothing answered), unless `stored` is that read's result.
    /// `looksUpRefusedKeys`: as `RequestDispatcher.handle`.
    @discardableResult
    private mutating func dispatch(_ request: Request, requestID: UInt32, stored: StoredChanges? = nil,
                                   looksUpRefusedKeys: Bool = false) -> StoredChangesRead? {
        if LiveSyncSession.handles(request) {
            return liveSync.handle(request, namespace: namespace, requestID: requestID, into: &answers, stored: stored,
                                   readsStored: dispatcher.cache != nil && stored == nil)
        } else if SnapshotSession.handles(request) {
            snapshotWork = snapshots.handle(request, namespace: namespace, requestID: requestID, into: &answers)
        } else {
            waits = dispatcher.handle(request, namespace: namespace, requestID: requestID, into: &answers,
                                      looksUpRefusedKeys: looksUpRefusedKeys)
        }
        return nil
    }

    private mutating func handshake(_ hello: Hello, requestID: UInt32) {
        guard let version = ProtocolVersions.negotiate(clientMin: hello.minVersion, clientMax: hello.maxVersion) else {
            let error = ChecklistError(.unsupportedVersion,
                                       "client offers versions \(hello.minVersion)...\(hello.maxVersion); server speaks protocol versions \(ProtocolVersions.description)",
                                       field: "minVersion")
            answers.fail(error, requestID: requestID)
            return
        }
        if let accessControl {
            // Without access control a token is accepted and ignored.
            guard let grant = authenticate(hello, with: accessControl, requestID: requestID) else { return }
            self.namespace = grant.namespace
        }
        state.helloAccepted()
        answers.encoder.compress = hello.features.contains(.compression)
        answers.sendsClientKeys = hello.features.contains(.clientKeys)
        answers.append(HelloOK(version: version, features: [.compression, .clientKeys], serverName: dispatcher.serverName, limits: limits),
                       requestID: requestID)
    }

    /// The grant of the HELLO's credential: its token (which wins), else
    /// the client certificate; nil when refused (answered and counted).
    private mutating func authenticate(_ hello: Hello, with accessControl: AccessControl, requestID: UInt32) -> AccessControl.Grant? {
        let credential: AccessControl.Credential
        if let token = hello.token {
            credential = .token(token)
        } else if let subject = peerCertificateSubject {
            credential = .certificate(subject: subject)
        } else {
            failedAuthentication(AccessRefusal(.noToken, "this server requires a token in HELLO"), requestID: requestID)
            return nil
        }
        let generation = accessControl.generation  // before the lookup: a reload in between is seen later
        switch accessControl.authenticate(credential, now: AccessControl.now()) {
        case .success(let grant):
            authentication = (credential, generation, grant.validUntil)
            return grant
        case .failure(let refusal):
            failedAuthentication(refusal, requestID: requestID)
            return nil
        }
    }

    /// A HELLO without a usable token: NOT_AUTHENTICATED; the last allowed
    /// failure also closes the connection (Protocol/SPEC.md section 2).
    private mutating func failedAuthentication(_ refusal: AccessRefusal, requestID: UInt32) {
        accessControl?.refusals.record(refusal)
        failedAuthentications += 1
        let limit = AccessControl.maxFailedAttempts
        refuse("\(refusal.message) (attempt \(failedAuthentications) of \(limit))", requestID: requestID,
               close: failedAuthentications >= limit)
    }

    private mutating func refuse(_ message: String, requestID: UInt32, close: Bool) {
        answers.fail(ChecklistError(.notAuthenticated, message), requestID: requestID)
        if close { closeRequested = true }
    }

    /// Why this connection lost its access (a reload revoked its token, or
    /// its signed token expired), counted once; nil while it holds. The
    /// handler checks it every tick and then closes the connection.
    mutating func accessLost() -> AccessRefusal? {
        if let lostAccess { return lostAccess }
        // Asked before every request: the usual answer reads two numbers,
        // and the credential (its strings) is read only to check it again.
        guard let accessControl, let checked = authentication?.generation else { return nil }
        let lost: AccessRefusal
        if let validUntil = authentication?.validUntil, AccessControl.now() >= validUntil {
            lost = AccessRefusal(.init(.expired), "the token of this connection expired")
        } else {
            let current = accessControl.generation
            if current == checked { return nil }
            guard let credential = authentication?.credential else { return nil }
            switch accessControl.authenticate(credential, now: AccessControl.now()) {
            case .success(let grant) where grant.namespace == namespace:
                authentication = (credential, current, grant.validUntil)
                return nil
            default:
                lost = AccessRefusal(.revoked, "the token of this connection was revoked")
            }
        }
        lostAccess = lost  // counted once; the connection closes with this answer
        accessControl.refusals.record(lost)
        return lost
    }
}
