import ChecklistModel
import ChecklistStore
import ChecklistWire

/// The protocol state of one connection, free of I/O: it is handed the
/// bytes that arrived, appends every answer to `output` and says whether the
/// connection must close. The socket layer carries that out.
///
/// Owned by the connection's event-loop thread; not shared.
struct ConnectionSession {
    /// What the socket layer must do after a call to `receive`.
    enum Action: Equatable {
        /// Keep reading.
        case `continue`
        /// Send what `output` holds, then close: framing is lost.
        case closeAfterFlush
    }

    enum State {
        case awaitingHello
        case ready(version: UInt64)
    }

    private(set) var state: State = .awaitingHello
    /// Frames to send, appended by `receive`. The owner drains it.
    var output = WireWriter(capacity: 4096)
    private var encoder = FrameEncoder(compress: false)
    private let dispatcher: RequestDispatcher
    private let limits: Limits
    /// The server's tokens; nil when it runs without access control.
    private let accessControl: AccessControl?
    /// The namespace of every request: `.default` without access control,
    /// else the one the HELLO token opened.
    private(set) var namespace: Namespace = .default
    /// The accepted token and the token-table generation it was last
    /// checked against (access control only).
    private var authentication: (token: String, generation: UInt64)?
    /// HELLOs refused for a missing or unknown token.
    private var failedAuthentications = 0
    /// Set by a request whose answer must be the connection's last.
    private var closeRequested = false
    /// SUBSCRIBE, UNSUBSCRIBE and CHANGES_SINCE, with this connection's
    /// subscriptions. The handler sets its `handle` once the connection is active.
    var liveSync: LiveSyncSession
    /// EXPORT and IMPORT, with this connection's running transfers.
    private var snapshots: SnapshotSession
    /// The heavy part of the last snapshot request, left for a transfer
    /// worker; the owner takes it with `takeSnapshotWork`.
    private var snapshotWork: SnapshotWork?

    /// The largest frame this session accepts.
    var maxFrameBytes: UInt32 { limits.maxFrameBytes }

    init(dispatcher: RequestDispatcher, limits: Limits, accessControl: AccessControl? = nil) {
        self.dispatcher = dispatcher
        self.limits = limits
        self.accessControl = accessControl
        self.liveSync = LiveSyncSession(hub: dispatcher.liveSync, store: dispatcher.store)
        self.snapshots = SnapshotSession(transfers: dispatcher.snapshots, store: dispatcher.store, limits: limits)
    }

    /// Handles the whole frames at the start of `input`, stopping early once
    /// `output` holds `outputBudget` bytes (back-pressure: the caller offers
    /// the rest again when its output drained), or after a snapshot request
    /// whose answer is left to a worker (`takeSnapshotWork`), and returns how
    /// many bytes it consumed.
    mutating func receive(_ input: UnsafeRawBufferPointer, outputBudget: Int) -> (consumed: Int, action: Action) {
        var consumed = 0
        while output.count < outputBudget {
            let rest = UnsafeRawBufferPointer(rebasing: input[consumed...])
            switch FrameParser.next(in: rest, maxFrameBytes: limits.maxFrameBytes) {
            case .needMore:
                return (consumed, .continue)
            case .fatal(let error):
                send(ErrorMessage(error), requestID: FrameHeader.pushRequestID)
                return (input.count, .closeAfterFlush)
            case let .frame(header, body, frameSize):
                handle(header: header, body: UnsafeRawBufferPointer(rebasing: rest[body]))
                consumed += frameSize
                if closeRequested { return (input.count, .closeAfterFlush) }
                // Later requests wait for that answer: answers keep request order.
                if snapshotWork != nil { return (consumed, .continue) }
            }
        }
        return (consumed, .continue)
    }

    /// The work the last request left for a transfer worker (EXPORT START
    /// or NEXT, IMPORT DATA or END), if any. Its answer is not in `output`:
    /// run the work off the loop, then hand its outcome to
    /// `completeSnapshotWork`, and give this session no request before that.
    mutating func takeSnapshotWork() -> SnapshotWork? {
        defer { snapshotWork = nil }
        return snapshotWork
    }

    /// Appends the answer `outcome` of `work` (taken from
    /// `takeSnapshotWork`) to `output`.
    mutating func completeSnapshotWork(_ work: SnapshotWork, _ outcome: SnapshotWork.Outcome) {
        snapshots.complete(work, outcome, into: &output, encoder: &encoder)
    }

    /// The connection closed: ends its transfers.
    mutating func connectionClosed() {
        snapshotWork = nil
        snapshots.endTransfers()
        liveSync.connectionClosed()
    }

    private mutating func handle(header: FrameHeader, body: UnsafeRawBufferPointer) {
        // Before HELLO_OK the server has not announced COMPRESSION (Protocol/SPEC.md section 1).
        if case .awaitingHello = state, header.flags.contains(.compressed) {
            send(ErrorMessage(.badField("flags", "a compressed body before HELLO_OK")), requestID: header.requestID)
            return
        }
        let request: Request
        do {
            request = try Request.decode(header: header, body: body, maxFrameBytes: limits.maxFrameBytes)
        } catch {
            send(ErrorMessage(error), requestID: header.requestID)
            return
        }
        switch (state, request) {
        case (.awaitingHello, .hello(let hello)):
            handshake(hello, requestID: header.requestID)
        case (.awaitingHello, _):
            send(ErrorMessage(ChecklistError(.helloRequired, "send HELLO before \(request.type)")), requestID: header.requestID)
        case (.ready, .hello):
            send(ErrorMessage(ChecklistError(.badState, "HELLO was already accepted on this connection")), requestID: header.requestID)
        case (.ready, _):
            guard tokenStillValid() else {
                refuse("the token of this connection was revoked", requestID: header.requestID, close: true)
                return
            }
            if LiveSyncSession.handles(request) {
                liveSync.handle(request, namespace: namespace, requestID: header.requestID, into: &output, encoder: &encoder)
                return
            }
            if SnapshotSession.handles(request) {
                snapshotWork = snapshots.handle(request, namespace: namespace, requestID: header.requestID,
                                                into: &output, encoder: &encoder)
                return
            }
            dispatcher.handle(request, namespace: namespace, requestID: header.requestID, into: &output, encoder: &encoder)
        }
    }

    private mutating func handshake(_ hello: Hello, requestID: UInt32) {
        guard let version = ProtocolVersions.negotiate(clientMin: hello.minVersion, clientMax: hello.maxVersion) else {
            let error = ChecklistError(.unsupportedVersion,
                                       "client offers versions \(hello.minVersion)...\(hello.maxVersion); server speaks protocol versions \(ProtocolVersions.description)",
                                       field: "minVersion")
            send(ErrorMessage(error), requestID: requestID)
            return
        }
        if let accessControl {
            // Without access control a token is accepted and ignored.
            guard let token = hello.token else {
                failedAuthentication("this server requires a token in HELLO", requestID: requestID)
                return
            }
            let generation = accessControl.generation  // before the lookup: a reload in between is seen later
            guard let namespace = accessControl.namespace(for: token) else {
                failedAuthentication("unknown token", requestID: requestID)
                return
            }
            self.namespace = namespace
            authentication = (token, generation)
        }
        state = .ready(version: version)
        encoder.compress = hello.features.contains(.compression)
        send(HelloOK(version: version, features: [.compression], serverName: dispatcher.serverName, limits: limits),
             requestID: requestID)
    }

    /// A HELLO without a usable token: NOT_AUTHENTICATED; the last allowed
    /// failure also closes the connection (Protocol/SPEC.md section 2).
    private mutating func failedAuthentication(_ reason: String, requestID: UInt32) {
        failedAuthentications += 1
        let limit = AccessControl.maxFailedAttempts
        refuse("\(reason) (attempt \(failedAuthentications) of \(limit))", requestID: requestID,
               close: failedAuthentications >= limit)
    }

    private mutating func refuse(_ message: String, requestID: UInt32, close: Bool) {
        send(ErrorMessage(ChecklistError(.notAuthenticated, message)), requestID: requestID)
        if close { closeRequested = true }
    }

    /// True once a reload of the tokens revoked this connection's token (the
    /// handler checks it every tick and then closes the connection).
    mutating func tokenRevoked() -> Bool { !tokenStillValid() }

    /// Whether the token this connection authenticated with still opens the
    /// same namespace. Costs one atomic load unless the tokens were reloaded.
    private mutating func tokenStillValid() -> Bool {
        guard let accessControl, let (token, checked) = authentication else { return true }
        let current = accessControl.generation
        if current == checked { return true }
        guard accessControl.namespace(for: token) == namespace else { return false }
        authentication = (token, current)
        return true
    }

    private mutating func send<M: WireMessage>(_ message: M, requestID: UInt32) {
        encoder.append(message, requestID: requestID, to: &output)
    }
}
