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
        connection.beginAwaitingAnswer()
        let me = loopBound(connection)
        let handle = connection.handle
        cache.prepare(load) { outcome in
            // Dropped if the connection closed meanwhile (its pins went with it).
            handle.execute { connection in me.value.finishListLoad(outcome, connection) }
        }
    }

    /// The reads are done (or a list could not be loaded: the parked
    /// request is answered with the outcome's error): reading resumes with
    /// the parked frame.
    func finishListLoad(_ outcome: ListLoadOutcome, _ connection: Connection) {
        guard awaitingListLoad else { return }
        awaitingListLoad = false
        session.listLoadFinished(outcome)
        connection.endAwaitingAnswer()  // offers the held input again
    }
}
