import ChecklistStorage
import ChecklistEventLoop
import ChecklistModel

// Requests parked until their lists are loaded or caught up, or their
// stored changes read (PostgreSQL's list cache, `ListCache`): the frame stays unread in the connection's input, the
// connection reads nothing, and the loop goes on serving its other
// connections. Once loaded, the input is offered again and the same frame
// is handed to the session, so answers keep request order.
extension ChecklistConnectionHandler {
    /// Has the database read for `load` on the loader threads (its lists
    /// loaded, caught up, its stored changes read); the outcome comes back
    /// to this loop (`finishListLoad`).
    func startListLoad(_ load: ListLoadRequest, _ connection: Connection) {
        guard let cache = session.listCache else { return }
        awaitingListLoad = true
        listLoadNumber &+= 1
        let number = listLoadNumber
        connection.beginAwaitingAnswer()
        let me = loopBound(connection)
        let handle = connection.handle
        cache.prepare(load) { outcome in
            // Dropped if the connection closed meanwhile (its pins went with it).
            handle.execute { connection in me.value.finishListLoad(outcome, number: number, connection) }
        }
        if let limit = cache.configuration.waitLimit {
            let timer = connection.eventLoop.schedule(after: limit) {
                handle.execute { connection in me.value.finishListLoad(Self.waitedTooLong, number: number, connection) }
            }
            _ = timer  // fires once; an outcome that came first makes it a no-op
        }
    }

    /// What a request parked longer than `ListCache.Configuration.waitLimit` is answered.
    static let waitedTooLong = ListLoadOutcome(error: ChecklistError(.unavailable,
        "the database did not answer in time for this request's lists; try again"))

    /// The reads are done (or a list could not be loaded, or the wait's
    /// limit passed: the parked request is answered with the outcome's
    /// error): reading resumes with the parked frame. An outcome for an
    /// earlier park (`number`) is ignored.
    func finishListLoad(_ outcome: ListLoadOutcome, number: UInt64, _ connection: Connection) {
        guard awaitingListLoad, number == listLoadNumber else { return }
        awaitingListLoad = false
        session.listLoadFinished(outcome)
        connection.endAwaitingAnswer()  // offers the held input again
    }
}
