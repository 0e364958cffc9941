import ChecklistEventLoop
import ChecklistModel

// Answers held until the log is durable (`AnswerHolder`), and the
// goodbye at shutdown, which follows every answer owed.
extension ProtocolHandler: PushGate {
    var heldBytes: Int { durability.heldBytes }

    /// Live pushes go behind held answers, never ahead of them: a
    /// SUBSCRIBE's answer and catch-up may be held there.
    func holdBehindAnswers(_ frame: [UInt8]) -> Bool {
        guard durability.isHolding else { return false }
        durability.hold(frame)
        return true
    }

    /// Sends the held answers whose commits are durable; if some still
    /// wait, joins the loop's waiters until their commit settles.
    func releaseHeld(_ connection: SocketConnection) {
        guard durability.isEnabled else { return }
        // An answer whose commit failed goes as ERROR UNAVAILABLE (outcome
        // unknown); the connection stays open.
        let released = durability.release(to: connection)
        // Keeps the in-flight estimate from counting the longer ERROR frames as sent.
        if released.addedBytes > 0 { pipeline.wrote(bytes: released.addedBytes, answers: 0) }
        // STATS counts every ERROR sent, these too.
        for (request, code) in released.refused { metrics.recordReplacedAnswer(of: request, with: code) }
        let waitingFor = released.waitingFor
        if connection.isOpen, session.state.heldAnswersReleased(stillHolding: durability.isHolding) == .sayGoodbyeAndEndWait {
            sendGoodbye(connection)
            connection.endAwaitingAnswer()
            return
        }
        // Requests held back (in-flight limit, output budget) may go on now.
        if pipeline.inputHeldBack { connection.offerInputAgain() }
        guard let lsn = waitingFor, connection.isOpen else { return }
        durabilityWaiters?.value.wait(self, connection, for: lsn)
    }

    /// The goodbye of Protocol/SPEC.md section 1: after the answers already
    /// owed, ERROR SHUTTING_DOWN with request id 0; the server then closes.
    /// A request already read whose answer a transfer worker makes is
    /// answered first (the connection's close waits for it); a parked one
    /// is dropped unanswered.
    func connectionShuttingDown(_ connection: SocketConnection) {
        settleGroupCommit(connection)
        carryOut(session.state.shuttingDown(holdingAnswers: durability.isHolding), connection)
    }

    /// Carries out a goodbye `ProtocolState` asks for: at once, or, when
    /// answers still wait for the log to be durable, once they have gone
    /// (the connection's close waits for that, up to the shutdown deadline).
    func carryOut(_ action: ProtocolState.Action, _ connection: SocketConnection) {
        switch action {
        case .sayGoodbye(let dropsParked):
            sendGoodbye(connection)
            if dropsParked { dropParked(connection) }
        case .goodbyeAfterHeldAnswers(let dropsParked):
            connection.beginAwaitingAnswer()
            if dropsParked { dropParked(connection) }
        default:
            break
        }
    }

    private func sendGoodbye(_ connection: SocketConnection) {
        sendConnectionError(ChecklistError(.shuttingDown, "the server is shutting down"), to: connection)
    }
}
