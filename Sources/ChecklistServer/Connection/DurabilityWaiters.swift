import ChecklistEventLoop
import ChecklistStorage

/// The connections of one event loop whose answers wait for their commits
/// to be durable (`AnswerHolder`), woken together: the loop asks the
/// storage for one wake-up, at the lowest position any of them waits for,
/// and when it comes every waiting connection sends what it may now
/// (`ProtocolHandler.releaseHeld`, which has a connection still holding
/// answers wait again). One registration and one task per loop each time
/// the durable position moves, however many connections wait.
///
/// Positions settle in order (the durable position only grows, and a
/// failure is reported before it passes the failed positions), so once the
/// lowest has settled the others may have too, and every waiting connection
/// looks. A connection whose earlier answer failed while its last one is
/// still pending is woken once the lowest position settles: late, never
/// wrongly (it checks each answer it holds).
///
/// Owned by its loop: made for it when the server starts, used only on its
/// thread (reached through a `LoopBound`).
final class DurabilityWaiters {
    private let loop: EventLoop
    private let storage: any ServerStorage
    /// The loop's waiter id with the storage: from the top of the range,
    /// apart from PostgreSQL upkeep's `UInt64.max`.
    private let waiterID: UInt64
    private typealias Waiting = [UInt64: (handler: ProtocolHandler, connection: SocketConnection, position: UInt64)]
    /// The waiting connections by id, and the position each waits for.
    private var waiting: Waiting = [:]
    /// Those being woken (`woken`); kept empty in between, with its capacity.
    private var ready: Waiting = [:]
    /// The position the storage was asked to wake the loop at, if any.
    private var registered: UInt64?
    /// In `woken`: the connections that wait again are registered once, after.
    private var waking = false

    init(loop: EventLoop, storage: any ServerStorage) {
        self.loop = loop
        self.storage = storage
        waiterID = UInt64.max - 1 - UInt64(loop.index)
    }

    /// Has `handler.releaseHeld(connection)` called once the commit at
    /// `position` has settled (or earlier); replaces the connection's
    /// earlier wait.
    func wait(_ handler: ProtocolHandler, _ connection: SocketConnection, for position: UInt64) {
        waiting[connection.id] = (handler, connection, position)
        if waking { return }
        if let registered, registered <= position { return }
        register(at: position)
    }

    /// The connection closed: it waits no more.
    func cancel(_ connection: SocketConnection) {
        guard waiting.removeValue(forKey: connection.id) != nil, waiting.isEmpty else { return }
        storage.cancelNotification(waiter: waiterID)
        registered = nil
    }

    /// Asks the storage to wake the loop once `position` settles
    /// (replacing the loop's earlier request).
    private func register(at position: UInt64) {
        registered = position
        let me = LoopBound(self, eventLoop: loop)
        storage.notify(waiter: waiterID, at: position) {
            _ = me.eventLoop.execute { me.value.woken() }
        }
    }

    /// On the loop, once the registered position settled: every waiting
    /// connection sends what it may; those still holding wait again.
    private func woken() {
        registered = nil
        swap(&ready, &waiting)
        waking = true
        for entry in ready.values { entry.handler.releaseHeld(entry.connection) }
        waking = false
        ready.removeAll(keepingCapacity: true)
        if let lowest = waiting.values.lazy.map(\.position).min() { register(at: lowest) }
    }
}
