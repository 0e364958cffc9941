import ChecklistEventLoop
import ChecklistModel
import ChecklistWire
import Synchronization

/// Where a connection's answers wait for durability (`AnswerHolder`):
/// a live push must not overtake them, since a SUBSCRIBE's answer and its
/// catch-up may be among them. Implemented by the connection's handler;
/// loop thread only.
protocol PushGate: AnyObject {
    /// Bytes of answers (and pushes) held now.
    var heldBytes: Int { get }
    /// Holds `frame` behind the held answers and returns true, if any are
    /// held; false (nothing done) when the push may be written at once.
    func holdBehindAnswers(_ frame: [UInt8]) -> Bool
}

/// The live-sync side of one connection: what it subscribed to and what
/// has been written to it. Made on the connection's loop at its first
/// SUBSCRIBE; the hub keeps a reference while it has subscriptions.
///
/// Threading: `local` is the connection loop's alone (it is what decides,
/// push by push, what is written); `queuedBytes` is shared with publishers.
final class Subscriber: Sendable {
    /// Loop-confined state: only the connection's loop opens it.
    final class State {
        var allLists = false
        var lists: Set<ListID> = []
        /// The revision of the last change written to the connection, per
        /// list (by catch-up or push); a push at or below it is a duplicate.
        var lastSent: [ListID: Revision] = [:]
        /// Goes up each time the subscriber loses all its subscriptions, so
        /// a drop decided for an earlier subscription is recognized as stale.
        var epoch: UInt64 = 0
        /// The connection's held answers, which pushes queue behind.
        weak var gate: (any PushGate)?

        var isActive: Bool { allLists || !lists.isEmpty }

        func wants(_ list: ListID) -> Bool { allLists || lists.contains(list) }

        func clear() {
            allLists = false
            lists = []
            lastSent = [:]
            epoch &+= 1
        }
    }

    let handle: SocketConnectionHandle
    let namespace: Namespace
    let local: LoopBound<State>
    /// Bytes of pushes waiting for this subscriber in its loop's outbox.
    let queuedBytes = Atomic<Int>(0)

    /// Must be called on the connection's loop.
    init(handle: SocketConnectionHandle, namespace: Namespace, gate: (any PushGate)? = nil) {
        self.handle = handle
        self.namespace = namespace
        let state = State()
        state.gate = gate
        self.local = LoopBound(state, eventLoop: handle.eventLoop)
    }

    var id: ObjectIdentifier { ObjectIdentifier(self) }

    /// Writes `change` to the connection unless the subscriber does not
    /// want it or already has it. Past the push buffer it drops the
    /// subscriptions instead. Loop thread only.
    func deliver(_ change: EncodedChange, hub: SubscriptionHub) {
        let state = local.value
        guard state.wants(change.list) else { return }
        if let last = state.lastSent[change.list], change.revision <= last { return }
        let connection = handle.connection
        guard connection.isOpen else { return }
        let pending = connection.pendingOutputBytes + (state.gate?.heldBytes ?? 0)
        if pending + change.frame.count > hub.configuration.maxPushBufferBytes {
            drop(hub: hub, pending: pending)
            return
        }
        // Behind answers that wait (a SUBSCRIBE's catch-up may be there).
        if state.gate?.holdBehindAnswers(change.frame) != true { connection.write(change.frame) }
        hub.recordDelivery()
        if change.isDeletion {
            state.lists.remove(change.list)
            state.lastSent[change.list] = nil
        } else {
            state.lastSent[change.list] = change.revision
        }
    }

    /// Ends every subscription and tells the client why. Loop thread only.
    func drop(hub: SubscriptionHub, pending: Int) {
        let state = local.value
        guard state.isActive else { return }
        state.clear()
        hub.unregister(self)
        let connection = handle.connection
        guard connection.isOpen else { return }
        let limit = hub.configuration.maxPushBufferBytes
        let message = SubscriptionDropped(
            reason: .slowConsumer,
            message: "more than \(limit) bytes of pushes were waiting for this connection (\(pending) pending); subscribe again from your last revisions, or use CHANGES_SINCE")
        var w = WireWriter(capacity: 128)
        var encoder = FrameEncoder(compress: false)
        encoder.append(message, requestID: FrameHeader.pushRequestID, to: &w)
        if state.gate?.holdBehindAnswers(w.bytes) != true { connection.write(w.bytes) }
        hub.recordDrop()
    }
}
