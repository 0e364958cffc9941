@testable import ChecklistServer
import Testing

/// Every transition of the connection's state machine, without a socket:
/// an event in a state, the state after it and the action the handler
/// must carry out.
@Suite struct ProtocolStateTests {
    typealias State = ProtocolState.State

    /// A machine brought to `target` by the events that lead there.
    static func machine(in target: State) -> ProtocolState {
        var m = ProtocolState()
        switch target {
        case .handshaking:
            break
        case .awaitingFirstBytes:
            _ = m.activated(overConnectionLimit: false)
        case .awaitingHello:
            m = machine(in: .awaitingFirstBytes)
            _ = m.readable(tlsClientHelloOnPlainPort: false)
        case .ready:
            m = machine(in: .awaitingHello)
            m.helloAccepted()
        case .parkedOnLoad:
            m = machine(in: .ready)
            _ = m.parked()
        case .awaitingTransfer:
            m = machine(in: .ready)
            m.transferStarted()
        case .drainingTransfer:
            m = machine(in: .awaitingTransfer)
            _ = m.shuttingDown(holdingAnswers: false)
        case .drainingHeldAnswers:
            m = machine(in: .ready)
            _ = m.shuttingDown(holdingAnswers: true)
        case .closing:
            m = machine(in: .ready)
            _ = m.serverCloses()
        case .closed:
            m = machine(in: .ready)
            _ = m.closed(inputClosed: false)
        }
        #expect(m.state == target)
        return m
    }

    static let all: [State] = [.handshaking, .awaitingFirstBytes, .awaitingHello, .ready, .parkedOnLoad(park: 1),
                               .awaitingTransfer, .drainingTransfer, .drainingHeldAnswers, .closing, .closed]

    /// Runs `event` in `state`; returns the action and the state after it.
    func run(_ state: State, _ event: (inout ProtocolState) -> ProtocolState.Action) -> (ProtocolState.Action, State) {
        var m = Self.machine(in: state)
        let action = event(&m)
        return (action, m.state)
    }

    // MARK: Handshake

    @Test func aNewConnectionHandshakes() {
        #expect(ProtocolState().state == .handshaking)
    }

    @Test(arguments: all) func activation(from state: State) {
        let served = run(state) { $0.activated(overConnectionLimit: false) }
        let refused = run(state) { $0.activated(overConnectionLimit: true) }
        if state == .handshaking {
            #expect(served == (.serve, .awaitingFirstBytes))
            #expect(refused == (.refuseOverLimit, .closing))
        } else {
            #expect(served == (.none, state))
            #expect(refused == (.none, state))
        }
    }

    @Test(arguments: all) func aTLSFailureCloses(from state: State) {
        let (_, after) = run(state) { $0.tlsFailed(); return .none }
        #expect(after == (state == .closed ? .closed : .closing))
    }

    // MARK: Reading and HELLO

    @Test(arguments: all) func input(in state: State) {
        let plain = run(state) { $0.readable(tlsClientHelloOnPlainPort: false) }
        let hello = run(state) { $0.readable(tlsClientHelloOnPlainPort: true) }
        switch state {
        case .awaitingFirstBytes:
            #expect(plain == (.read, .awaitingHello))
            #expect(hello == (.noteTLSOnPlainPortThenRead, .awaitingHello))
        case .awaitingHello, .ready:
            #expect(plain == (.read, state))
            #expect(hello == (.read, state))  // only the first bytes are looked at
        default:
            #expect(plain == (.holdInput, state))
            #expect(hello == (.holdInput, state))
        }
    }

    @Test(arguments: all) func aHELLOMakesTheConnectionReady(in state: State) {
        let (_, after) = run(state) { $0.helloAccepted(); return .none }
        #expect(after == (state == .awaitingHello ? .ready : state))
    }

    // MARK: Parked on a load

    @Test(arguments: all) func parking(in state: State) {
        let result = run(state) { $0.parked() }
        if state == .ready {
            #expect(result == (.startLoad(park: 1), .parkedOnLoad(park: 1)))
        } else {
            #expect(result == (.none, state))
        }
    }

    @Test func aLoadResumesItsOwnParkOnly() {
        var m = Self.machine(in: .parkedOnLoad(park: 1))
        #expect(m.awaitsAnswer)
        #expect(m.loadFinished(park: 0) == .none)
        #expect(m.state == .parkedOnLoad(park: 1))
        #expect(m.loadFinished(park: 1) == .resumeParked)
        #expect(m.state == .ready)
        #expect(m.loadFinished(park: 1) == .none)  // the wait's limit, after the outcome
        #expect(m.parked() == .startLoad(park: 2))
        #expect(m.loadFinished(park: 1) == .none)  // an earlier park's
        #expect(m.state == .parkedOnLoad(park: 2))
        #expect(m.loadFinished(park: 2) == .resumeParked)
    }

    @Test(arguments: all) func aLoadOutsideItsParkIsIgnored(in state: State) {
        guard state != .parkedOnLoad(park: 1) else { return }
        #expect(run(state) { $0.loadFinished(park: 1) } == (.none, state))
    }

    // MARK: Transfers

    @Test(arguments: all) func startingATransfer(in state: State) {
        let (_, after) = run(state) { $0.transferStarted(); return .none }
        #expect(after == (state == .ready ? .awaitingTransfer : state))
    }

    @Test(arguments: all) func finishingATransfer(in state: State) {
        let free = run(state) { $0.transferFinished(holdingAnswers: false) }
        let holding = run(state) { $0.transferFinished(holdingAnswers: true) }
        switch state {
        case .awaitingTransfer:
            #expect(free == (.none, .ready))
            #expect(holding == (.none, .ready))
        case .drainingTransfer:
            #expect(free == (.sayGoodbye(dropParked: false), .closing))
            #expect(holding == (.goodbyeAfterHeldAnswers(dropParked: false), .drainingHeldAnswers))
        default:
            #expect(free == (.none, state))
            #expect(holding == (.none, state))
        }
    }

    // MARK: Draining and closing

    @Test(arguments: all) func shuttingDown(in state: State) {
        let free = run(state) { $0.shuttingDown(holdingAnswers: false) }
        let holding = run(state) { $0.shuttingDown(holdingAnswers: true) }
        switch state {
        case .awaitingFirstBytes, .awaitingHello, .ready:
            #expect(free == (.sayGoodbye(dropParked: false), .closing))
            #expect(holding == (.goodbyeAfterHeldAnswers(dropParked: false), .drainingHeldAnswers))
        case .parkedOnLoad:
            #expect(free == (.sayGoodbye(dropParked: true), .closing))
            #expect(holding == (.goodbyeAfterHeldAnswers(dropParked: true), .drainingHeldAnswers))
        case .awaitingTransfer:
            #expect(free == (.none, .drainingTransfer))
            #expect(holding == (.none, .drainingTransfer))
        default:
            #expect(free == (.none, state))
            #expect(holding == (.none, state))
        }
    }

    @Test(arguments: all) func heldAnswersReleased(in state: State) {
        let some = run(state) { $0.heldAnswersReleased(stillHolding: true) }
        let last = run(state) { $0.heldAnswersReleased(stillHolding: false) }
        #expect(some == (.none, state))
        if state == .drainingHeldAnswers {
            #expect(last == (.sayGoodbyeAndEndWait, .closing))
        } else {
            #expect(last == (.none, state))
        }
    }

    @Test(arguments: all) func theServerCloses(in state: State) {
        let result = run(state) { $0.serverCloses() }
        if state == .closing || state == .closed {
            #expect(result == (.none, state))
        } else {
            #expect(result == (.close, .closing))
        }
    }

    @Test(arguments: all) func ticks(in state: State) {
        let result = run(state) { $0.tick() }
        switch state {
        case .awaitingFirstBytes, .awaitingHello, .ready, .closing:
            #expect(result == (.checkIdle, state))
        default:
            #expect(result == (.none, state))  // owed an answer, or not open
        }
    }

    @Test(arguments: all) func closed(from state: State) {
        let reset = run(state) { $0.closed(inputClosed: false) }
        let ended = run(state) { $0.closed(inputClosed: true) }
        switch state {
        case .awaitingFirstBytes, .awaitingHello, .ready, .parkedOnLoad, .awaitingTransfer:
            #expect(reset == (.logClose(peerReset: true), .closed))
            #expect(ended == (.logClose(peerReset: false), .closed))
        case .closed:
            #expect(reset == (.none, .closed))
            #expect(ended == (.none, .closed))
        default:
            #expect(reset == (.logClose(peerReset: false), .closed))
            #expect(ended == (.logClose(peerReset: false), .closed))
        }
    }

    @Test(arguments: all) func whatHasAcceptedAHELLO(in state: State) {
        let accepted: Bool
        switch state {
        case .ready, .parkedOnLoad, .awaitingTransfer: accepted = true
        default: accepted = false
        }
        #expect(Self.machine(in: state).hasAcceptedHello == accepted)
    }

    @Test(arguments: all) func whatAwaitsAnAnswer(in state: State) {
        let owed: Bool
        switch state {
        case .parkedOnLoad, .awaitingTransfer, .drainingTransfer: owed = true
        default: owed = false
        }
        #expect(Self.machine(in: state).awaitsAnswer == owed)
    }
}
