import ChecklistEventLoop
import ChecklistModel

// The coarse tick: idle buffers given back, revoked or expired tokens, idle timeout.
extension ProtocolHandler {
    /// Called about once a second while the connection is open.
    func connectionTick(_ connection: SocketConnection, now: ContinuousClock.Instant) {
        settleGroupCommit(connection)
        // An answer is owed: neither idle nor to be cut off before it is sent
        // (a revoked token is acted on at the first tick after it).
        guard session.state.tick() == .checkIdle else { return }
        let quiet = now - max(connection.lastInputAt, transfers.answeredAt ?? connection.lastInputAt)
        // A quiet connection keeps no answer buffer and no staging arrays
        // (thousands of idle connections should cost no buffer memory);
        // the next answer or PATCH makes them.
        if quiet >= .seconds(1) { session.releaseIdleBuffers() }
        // Access control: a connection whose token a reload revoked is closed
        // within a tick, even one that only listens for pushes.
        if connection.isOpen, let lost = session.accessLost() {
            _ = session.state.serverCloses()
            sendConnectionError(ChecklistError(.notAuthenticated, lost.message), to: connection)
            connection.close()
            return
        }
        guard connection.isOpen else { return }
        switch idleTimeout.verdict(quiet: quiet, outputWaiting: connection.outputWaitingSince.map { now - $0 },
                                   pendingOutput: connection.pendingOutputBytes) {
        case .keep:
            return
        case .outputStalled(let limit):
            _ = session.state.serverCloses()
            metrics.recordIdleClose()
            policy.log.warn("output_stalled", ["conn": connection.id, "peer": connection.peer,
                                               "pendingBytes": connection.pendingOutputBytes,
                                               "idleTimeoutSeconds": ChecklistServer.seconds(limit)])
            connection.abort()
        case .idle(let limit):
            closeIdle(connection, after: limit)
        }
    }

    /// Nothing received for `limit` and nothing owed: says why, then closes.
    private func closeIdle(_ connection: SocketConnection, after limit: Duration) {
        pipeline.outputDrained()
        _ = session.state.serverCloses()
        metrics.recordIdleClose()
        let seconds = ChecklistServer.seconds(limit)
        policy.log.info("idle_timeout", ["conn": connection.id, "peer": connection.peer, "idleTimeoutSeconds": seconds])
        sendConnectionError(ChecklistError(.limitExceeded, "no request for \(seconds) seconds: closing", field: "idleTimeout"),
                            to: connection)
        connection.close()
    }
}
