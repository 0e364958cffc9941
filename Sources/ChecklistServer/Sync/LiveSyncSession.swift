import ChecklistStorage
import ChecklistEventLoop
import ChecklistModel
import ChecklistStore
import ChecklistWire

/// The live-sync requests of one connection (SUBSCRIBE, UNSUBSCRIBE,
/// CHANGES_SINCE): part of its `ProtocolSession`, on the connection's
/// loop. Answers go to the session's output like every other answer; the
/// catch-up pushes of a SUBSCRIBE follow its answer in the same output, so
/// they precede any live push, which the hub delivers later on this loop.
struct LiveSyncSession {
    let hub: SubscriptionHub?
    let store: Store
    /// The connection, once active (set by the handler).
    var handle: SocketConnectionHandle?
    /// Where the connection's answers wait, which live pushes queue behind
    /// (set by the handler before the first SUBSCRIBE; a subscriber made
    /// without it lets pushes overtake held answers).
    weak var gate: (any PushGate)?
    /// Made at the first SUBSCRIBE.
    private(set) var subscriber: Subscriber?

    init(hub: SubscriptionHub?, store: Store) {
        self.hub = hub
        self.store = store
    }

    /// Whether this component answers `request`.
    static func handles(_ request: Request) -> Bool {
        switch request {
        case .subscribe, .unsubscribe, .changesSince: return true
        default: return false
        }
    }

    /// Answers `request` into `answers`, or, for a CHANGES_SINCE that the
    /// feed does not reach back for, returns the read of the database's
    /// stored changes that would answer it (with nothing answered) when
    /// `readsStored` and `stored` is nil (none was read for it yet). Given
    /// `stored`, the answer comes from it where the feed falls short.
    mutating func handle(_ request: Request, namespace: Namespace, requestID: UInt32, into answers: inout AnswerWriter,
                         stored: StoredChanges? = nil, readsStored: Bool = false) -> StoredChangesRead? {
        do throws(ChecklistError) {
            guard let hub else { throw ChecklistError(.badState, "live sync is not enabled on this server") }
            switch request {
            case .subscribe(let m):
                let subscriber = try self.subscriber(namespace: namespace)
                let outcome = hub.subscribe(subscriber, m, store: store, fetchesPastFeed: readsStored)
                answers.append(outcome.answer, requestID: requestID)
                for change in outcome.catchUp { answers.appendPush(change.frame) }
            case .unsubscribe(let m):
                if let subscriber { hub.unsubscribe(subscriber, m) }
                answers.append(Unsubscribed(), requestID: requestID)
            case .changesSince(let m):
                // Checked when carried out, first, like GET_PAGE's limit (Protocol/SPEC.md section 2).
                guard m.limit >= 1 else { throw ChecklistError.badField("limit", "limit must be at least 1") }
                let current: Revision
                let changes: [EncodedChange]
                do throws(ChecklistError) {
                    (current, changes) = try hub.changes(of: m.list, after: m.revision, limit: m.limit, in: namespace,
                                                         store: store, stored: stored)
                } catch where error.code == .resyncRequired && readsStored && stored == nil
                                && m.revision < (error.revision ?? 0) {
                    // Past the node's feed, not ahead of the list: the database may still hold them.
                    return StoredChangesRead(list: m.list, namespace: namespace, after: m.revision,
                                             limit: Int(clamping: min(m.limit, UInt64(StoredChangesRead.maxChanges))),
                                             maxFrameBytes: hub.maxFrameBytes)
                }
                answers.append(type: .changes, requestID: requestID) { w in
                    Changes.encodeHeader(list: m.list, revision: current, count: changes.count, into: &w)
                    for change in changes { w.bytes.append(contentsOf: change.body) }
                }
            default:
                throw ChecklistError(.internalError, "\(request.type) is not a live-sync request")
            }
        } catch {
            answers.fail(error, requestID: requestID)
        }
        return nil
    }

    /// The connection closed: forget its subscriptions.
    func connectionClosed() {
        if let subscriber { hub?.unregister(subscriber) }
    }

    private mutating func subscriber(namespace: Namespace) throws(ChecklistError) -> Subscriber {
        if let subscriber { return subscriber }
        guard let handle else { throw ChecklistError(.internalError, "the connection is not active yet") }
        let made = Subscriber(handle: handle, namespace: namespace, gate: gate)
        subscriber = made
        return made
    }
}
