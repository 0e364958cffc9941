/// The life of one protocol connection as one state, free of I/O: each
/// event (the socket became active, bytes came, a request parked, the
/// server began shutting down, ...) moves the state and returns the
/// `Action` the handler (`ProtocolHandler`) then carries out on the socket.
/// Nothing here reads, writes or logs, so every transition is tested
/// without a socket (Tests/AccessControlTests/ProtocolStateTests.swift).
///
///     handshaking ─activated→ awaitingFirstBytes ─readable→ awaitingHello ─helloAccepted→ ready
///     ready ─parked→ parkedOnLoad ─loadFinished→ ready
///     ready ─transferStarted→ awaitingTransfer ─transferFinished→ ready
///     any open state ─shuttingDown→ drainingTransfer | drainingHeldAnswers | closing
///     any open state ─serverCloses / tlsFailed→ closing;  any state ─closed→ closed
///
/// `ProtocolSession` holds it: the session checks a HELLO and its
/// credential and reports it accepted (`helloAccepted`), and asks
/// `hasAcceptedHello` before handling any other request; the handler
/// reports every other event. Owned by the connection's event-loop thread.
struct ProtocolState: Equatable {
    enum State: Equatable {
        /// Accepted; on a TLS port its handshake runs. Not active yet.
        case handshaking
        /// Active (on a TLS port: the handshake is complete), no byte read yet.
        case awaitingFirstBytes
        /// Reading requests; no HELLO accepted yet.
        case awaitingHello
        /// A HELLO was accepted (with access control: authenticated).
        case ready
        /// A request waits, decoded, for database reads (`ParkedRequest`);
        /// nothing is read meanwhile. `park` numbers the parks of this
        /// connection, so that the outcome of an earlier one is known stale.
        case parkedOnLoad(park: UInt64)
        /// A transfer worker makes a request's answer; nothing is read meanwhile.
        case awaitingTransfer
        /// Shutting down while a transfer worker makes an answer: the
        /// goodbye follows that answer.
        case drainingTransfer
        /// Shutting down while answers wait for the log to be durable: the
        /// goodbye follows them (the connection's close waits for it).
        case drainingHeldAnswers
        /// The server is closing the connection (a refusal, lost framing,
        /// the idle timeout, a revoked token, a TLS failure, the goodbye):
        /// what is owed is sent, then it closes. Not the peer's doing.
        case closing
        case closed
    }

    /// What the handler does after an event.
    enum Action: Equatable {
        /// Nothing (also: an event that does not apply in this state).
        case none
        /// Serve the new connection: set its limits, log it opened.
        case serve
        /// Over the connection limit: ERROR LIMIT_EXCEEDED, then the close.
        case refuseOverLimit
        /// Read and handle the frames offered.
        case read
        /// Note a TLS ClientHello on a plaintext port (log, count), then read.
        case noteTLSOnPlainPortThenRead
        /// Leave the input unread: an answer is owed first.
        case holdInput
        /// Send what is owed, then close.
        case close
        /// Have the database read for the parked request (park `park`).
        case startLoad(park: UInt64)
        /// Hand the parked request back to the session.
        case resumeParked
        /// Send the goodbye (ERROR SHUTTING_DOWN) now; with `dropParked`,
        /// a parked request is first dropped unanswered.
        case sayGoodbye(dropParked: Bool)
        /// Send the goodbye once the answers held for the log have gone,
        /// keeping the connection's close waiting until then
        /// (`beginAwaitingAnswer`); with `dropParked`, as above.
        case goodbyeAfterHeldAnswers(dropParked: Bool)
        /// The held answers went: send the goodbye and let the close go on
        /// (`endAwaitingAnswer`).
        case sayGoodbyeAndEndWait
        /// Tick: check the idle timeout and the token (nothing is owed off the loop).
        case checkIdle
        /// Closed: log it, as the peer's reset (`peerReset`) or a plain close.
        case logClose(peerReset: Bool)
    }

    private(set) var state = State.handshaking
    /// Parks so far (`State.parkedOnLoad`).
    private var parks: UInt64 = 0

    /// The connection became active (on a TLS port: its handshake completed).
    mutating func activated(overConnectionLimit: Bool) -> Action {
        guard case .handshaking = state else { return .none }
        if overConnectionLimit {
            state = .closing
            return .refuseOverLimit
        }
        state = .awaitingFirstBytes
        return .serve
    }

    /// Input is offered. `tlsClientHelloOnPlainPort`: the first byte is a
    /// TLS handshake record's and the port is plaintext (only the first
    /// bytes are looked at).
    mutating func readable(tlsClientHelloOnPlainPort: Bool) -> Action {
        switch state {
        case .awaitingFirstBytes:
            state = .awaitingHello
            return tlsClientHelloOnPlainPort ? .noteTLSOnPlainPortThenRead : .read
        case .awaitingHello, .ready:
            return .read
        case .handshaking, .parkedOnLoad, .awaitingTransfer, .drainingTransfer, .drainingHeldAnswers, .closing, .closed:
            return .holdInput
        }
    }

    /// The session accepted a HELLO.
    mutating func helloAccepted() {
        if case .awaitingHello = state { state = .ready }
    }

    /// Whether a HELLO was accepted, for the session: true from `ready`
    /// on, until the connection drains or closes (no request is handed to
    /// the session then).
    var hasAcceptedHello: Bool {
        switch state {
        case .ready, .parkedOnLoad, .awaitingTransfer: return true
        case .handshaking, .awaitingFirstBytes, .awaitingHello, .drainingTransfer, .drainingHeldAnswers, .closing, .closed:
            return false
        }
    }

    /// A request of a ready connection waits for database reads.
    mutating func parked() -> Action {
        guard case .ready = state else { return .none }
        parks &+= 1
        state = .parkedOnLoad(park: parks)
        return .startLoad(park: parks)
    }

    /// The reads for park `park` are done (or their wait's limit passed).
    mutating func loadFinished(park: UInt64) -> Action {
        guard case .parkedOnLoad(let current) = state, current == park else { return .none }
        state = .ready
        return .resumeParked
    }

    /// A request's answer is handed to a transfer worker.
    mutating func transferStarted() {
        if case .ready = state { state = .awaitingTransfer }
    }

    /// The transfer worker's answer is written. `holdingAnswers`: answers
    /// still wait for the log.
    mutating func transferFinished(holdingAnswers: Bool) -> Action {
        switch state {
        case .awaitingTransfer:
            state = .ready
            return .none
        case .drainingTransfer:
            return goodbye(holdingAnswers: holdingAnswers, dropParked: false)
        default:
            return .none
        }
    }

    /// The server is shutting down gracefully (the connection is active).
    mutating func shuttingDown(holdingAnswers: Bool) -> Action {
        switch state {
        case .awaitingFirstBytes, .awaitingHello, .ready:
            return goodbye(holdingAnswers: holdingAnswers, dropParked: false)
        case .parkedOnLoad:
            return goodbye(holdingAnswers: holdingAnswers, dropParked: true)
        case .awaitingTransfer:
            state = .drainingTransfer
            return .none
        case .handshaking, .drainingTransfer, .drainingHeldAnswers, .closing, .closed:
            return .none
        }
    }

    private mutating func goodbye(holdingAnswers: Bool, dropParked: Bool) -> Action {
        if holdingAnswers {
            state = .drainingHeldAnswers
            return .goodbyeAfterHeldAnswers(dropParked: dropParked)
        }
        state = .closing
        return .sayGoodbye(dropParked: dropParked)
    }

    /// Answers held for the log were sent; `stillHolding`: some still wait.
    mutating func heldAnswersReleased(stillHolding: Bool) -> Action {
        guard case .drainingHeldAnswers = state, !stillHolding else { return .none }
        state = .closing
        return .sayGoodbyeAndEndWait
    }

    /// The server closes the connection after what is owed (a refusal,
    /// lost framing, the idle timeout, a revoked token).
    mutating func serverCloses() -> Action {
        switch state {
        case .closing, .closed:
            return .none
        default:
            state = .closing
            return .close
        }
    }

    /// The TLS layer closes the connection (it aborts it itself).
    mutating func tlsFailed() {
        if state != .closed { state = .closing }
    }

    /// The coarse tick of an open connection.
    mutating func tick() -> Action {
        switch state {
        case .awaitingFirstBytes, .awaitingHello, .ready, .closing:
            return .checkIdle
        case .parkedOnLoad, .awaitingTransfer, .drainingTransfer, .drainingHeldAnswers:
            return .none  // an answer (or the goodbye) is owed: neither idle nor to be cut off
        case .handshaking, .closed:
            return .none
        }
    }

    /// The connection closed, by either side. `inputClosed`: the peer had
    /// ended its input (a close, not a reset).
    mutating func closed(inputClosed: Bool) -> Action {
        let before = state
        state = .closed
        switch before {
        case .awaitingFirstBytes, .awaitingHello, .ready, .parkedOnLoad, .awaitingTransfer:
            return .logClose(peerReset: !inputClosed)
        case .handshaking, .drainingTransfer, .drainingHeldAnswers, .closing:
            return .logClose(peerReset: false)
        case .closed:
            return .none
        }
    }

    /// Whether an answer is owed from off the loop (a parked request, a transfer).
    var awaitsAnswer: Bool {
        switch state {
        case .parkedOnLoad, .awaitingTransfer, .drainingTransfer: return true
        default: return false
        }
    }
}
