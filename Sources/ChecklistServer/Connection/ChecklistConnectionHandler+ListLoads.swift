import ChecklistEventLoop
import ChecklistModel

// Requests parked until their lists are loaded (PostgreSQL's list cache,
// `ListCache`): the frame stays unread in the connection's input, the
// connection reads nothing, and the loop goes on serving its other
// connections. Once loaded, the input is offered again and the same frame
// is handed to the session, so answers keep request order.
extension ChecklistConnectionHandler {
    /// Has `load`'s lists loaded on the loader threads; the outcome comes
    /// back to this loop (`finishListLoad`).
    func startListLoad(_ load: ListLoadRequest, _ connection: Connection) {
        guard let cache = session.listCache else { return }
        awaitingListLoad = true
        connection.beginAwaitingAnswer()
        let me = loopBound(connection)
        let handle = connection.handle
        cache.load(load.lists, in: load.namespace) { error in
            // Dropped if the connection closed meanwhile (its pins went with it).
            handle.execute { connection in me.value.finishListLoad(error, connection) }
        }
    }

    /// The lists are in (or could not be loaded: the parked request is
    /// answered with `error`): reading resumes with the parked frame.
    func finishListLoad(_ error: ChecklistError?, _ connection: Connection) {
        guard awaitingListLoad else { return }
        awaitingListLoad = false
        session.listLoadFinished(error)
        connection.endAwaitingAnswer()  // offers the held input again
    }
}
