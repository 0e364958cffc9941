import ChecklistStorage
import ChecklistEventLoop
import ChecklistModel
import ChecklistWire

// Requests parked until their lists are loaded or caught up, or their
// stored changes read (PostgreSQL's list cache, `ListCache`): the request
// waits decoded (`ParkedRequest`), the connection reads nothing, and the
// loop goes on serving its other connections. Once the reads are done the
// session resumes the same decoded request, then the input behind it is
// offered again, so answers keep request order.
extension ProtocolHandler {
    /// Has the database read for `request` on the loader threads (its
    /// lists loaded, caught up, its stored changes read); the outcome comes
    /// back to this loop (`finishListLoad`).
    func startListLoad(_ request: ParkedRequest, header: FrameHeader, _ connection: SocketConnection) {
        guard let cache = session.listCache, case .startLoad(let number) = session.state.parked() else {
            session.dropParked(request)  // not ready: cannot happen, a parked request comes from a ready session
            return
        }
        parked = (request, header)
        connection.beginAwaitingAnswer()
        let me = loopBound(connection)
        let handle = connection.handle
        cache.prepare(request.load) { outcome in
            // Dropped if the connection closed meanwhile (its pins went with it).
            handle.execute { connection in me.value.finishListLoad(outcome, park: number, connection) }
        }
        if let limit = cache.configuration.waitLimit {
            let timer = connection.eventLoop.schedule(after: limit) {
                handle.execute { connection in me.value.finishListLoad(Self.waitedTooLong, park: number, connection) }
            }
            _ = timer  // fires once; an outcome that came first makes it a no-op
        }
    }

    /// Drops the parked request unanswered (at the goodbye): its pins go
    /// back and the connection stops waiting for it; its reads' outcome,
    /// when it comes, is ignored.
    func dropParked(_ connection: SocketConnection) {
        guard let (request, _) = parked.take() else { return }
        session.dropParked(request)
        connection.endAwaitingAnswer()
    }

    /// What a request parked longer than `ListCache.Configuration.waitLimit` is answered.
    static let waitedTooLong = ListLoadOutcome(error: ChecklistError(.unavailable,
        "the database did not answer in time for this request's lists; try again"))

    /// The reads are done (or a list could not be loaded, or the wait's
    /// limit passed: the parked request is answered with the outcome's
    /// error): the session resumes the parked request, then reading goes
    /// on. An outcome for another park than the current one (an earlier
    /// one, or one dropped at the goodbye) is ignored.
    func finishListLoad(_ loaded: ListLoadOutcome, park: UInt64, _ connection: SocketConnection) {
        guard session.state.loadFinished(park: park) == .resumeParked, let (request, header) = parked.take() else { return }
        defer { connection.endAwaitingAnswer() }  // offers the held input again
        guard connection.isOpen else {
            session.dropParked(request)
            return
        }
        let began = connection.eventLoop.elapsed
        let logBefore = durability.logPosition
        let outcome = session.resume(request, loaded: loaded)
        if let again = outcome.parked {
            startListLoad(again, header: header, connection)
            return
        }
        if let work = outcome.transferWork {
            startTransfer(PendingTransfer(work: work, header: header, began: began, logBefore: logBefore), connection)
            return
        }
        durability.noteAnswer(outcome, to: header.type, logBefore: logBefore)
        record(header, outcome, took: connection.eventLoop.elapsed - began, connection)
        sendAnswers(count: 1, connection)
        if outcome.closesConnection, session.state.serverCloses() == .close {
            connection.close()  // after the answer, once the awaited answer has ended
        }
    }
}
