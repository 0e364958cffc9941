import ChecklistEventLoop
import ChecklistModel

// Snapshot requests whose answers a transfer worker makes (see `ConnectionTransfers`).
extension ProtocolHandler {
    /// Runs `transfer`'s work on a worker; its answer comes back to this
    /// loop (`finishTransfer`). Meanwhile the connection reads nothing.
    func startTransfer(_ transfer: PendingTransfer, _ connection: SocketConnection) {
        transfers.awaited = transfer
        session.state.transferStarted()
        connection.beginAwaitingAnswer()
        let me = loopBound(connection)
        let handle = connection.handle
        let queued = transfers.submit(transfer.work) { outcome in
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
    func finishTransfer(_ result: SnapshotWork.Outcome, _ connection: SocketConnection) {
        guard let transfer = transfers.awaited else { return }
        transfers.awaited = nil
        defer { connection.endAwaitingAnswer() }
        guard connection.isOpen else { return }
        let outcome = session.completeSnapshotWork(transfer.work, result)
        // IMPORT END logged the import: its answer waits until that is durable.
        if transfer.work.kind == .importEnd { durability.noteAnswer(outcome, to: transfer.header.type, logBefore: transfer.logBefore) }
        record(transfer.header, outcome, took: connection.eventLoop.elapsed - transfer.began, connection)
        sendAnswers(count: 1, connection)
        transfers.answeredAt = connection.eventLoop.now
        // The server began shutting down meanwhile: the goodbye follows this answer.
        carryOut(session.state.transferFinished(holdingAnswers: durability.isHolding), connection)
    }
}
