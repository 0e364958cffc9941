import ChecklistModel
import ChecklistWire
import Synchronization

/// A frame the server pushed for live sync (request id 0).
public enum LivePush: Equatable, Sendable {
    /// A committed change of a subscribed list (CHANGE).
    case change(ListChange)
    /// The server ended every subscription of the connection
    /// (SUBSCRIPTION_DROPPED): subscribe again from your last revisions.
    case dropped(SubscriptionDropped)
}

/// The live-sync requests of protocol v1 on one connection (Protocol/SPEC.md
/// sections 6.11-6.15 and 9). `ChecklistSync` builds reconnection,
/// resubscription and exactly-once patches on these.
extension ChecklistConnection {
    /// The pushes of this connection, in the order the server sent them.
    /// Install it before subscribing. One stream per connection at a time:
    /// a new call replaces the previous stream, which then ends.
    ///
    /// The stream ends when the connection closes, or when more than
    /// `bufferLimit` pushes wait unread (pushes were lost: subscribe again
    /// from your last revisions; the connection itself is fine).
    public func livePushes(bufferLimit: Int = 16_384) -> AsyncStream<LivePush> {
        let (stream, continuation) = AsyncStream.makeStream(of: LivePush.self,
                                                            bufferingPolicy: .bufferingOldest(max(1, bufferLimit)))
        let limit = receiveLimit
        core.setPushHandler { header, body in
            let message = body.withUnsafeBytes { raw in
                try? ServerMessage.decode(header: header, body: raw, maxFrameBytes: limit)
            }
            let push: LivePush
            switch message {
            case .changePush(let m)?: push = .change(m.change)
            case .subscriptionDropped(let m)?: push = .dropped(m)
            default: return  // a goodbye ERROR, or a push this client does not know
            }
            if case .dropped = continuation.yield(push) { continuation.finish() }
        }
        // A later stream replaces the handler; one whose stream ended drops what it gets.
        Task { [core] in
            await core.waitUntilClosed()
            continuation.finish()
        }
        return stream
    }

    /// Subscribes to `entries` (each optionally from the revision the client
    /// has: the changes after it are pushed first, right after the answer),
    /// and with `allLists` to every list of the namespace, including lists
    /// created later. Install `livePushes()` first.
    public func subscribe(_ entries: [Subscribe.Entry], allLists: Bool = false) async throws -> Subscribed {
        let answer = try await call(.subscribe(Subscribe(allLists: allLists, entries: entries)))
        guard case .subscribed(let subscribed) = answer else { throw unexpected(answer, "SUBSCRIBED") }
        return subscribed
    }

    /// Ends the subscriptions of `lists`; with `everything`, every
    /// subscription of the connection. No push for them follows the answer.
    public func unsubscribe(_ lists: [ListID] = [], everything: Bool = false) async throws {
        let answer = try await call(.unsubscribe(Unsubscribe(everything: everything, lists: lists)))
        guard case .unsubscribed = answer else { throw unexpected(answer, "UNSUBSCRIBED") }
    }

    /// One page of the changes of `list` after `revision` (CHANGES_SINCE).
    /// The client is caught up when the last change's revision (or, with
    /// none, `revision`) equals the answer's `revision`.
    ///
    /// - Throws: `.server` with `RESYNC_REQUIRED` (carrying the list's
    ///   current revision) when the changes are no longer retained.
    public func changes(of list: ListID, since revision: Revision, limit: Int = 1000) async throws -> Changes {
        let request = ChangesSince(list: list, revision: revision, limit: UInt64(max(1, limit)))
        let answer = try await call(.changesSince(request))
        guard case .changes(let changes) = answer else { throw unexpected(answer, "CHANGES") }
        return changes
    }

    /// PATCH with an idempotency key: sent again with the same key (after a
    /// lost answer), it is answered with the original result and applied
    /// once. `ChecklistSync.patch` assigns keys and retries for you.
    @discardableResult
    public func patch(_ list: ListID, baseRevision: Revision? = nil, idempotencyKey: IdempotencyKey?,
                      ops: [PatchOperation]) async throws -> PatchOK {
        let request = Patch(list: list, baseRevision: baseRevision, idempotencyKey: idempotencyKey, ops: ops)
        let answer = try await call(.patch(request))
        guard case .patchOK(let ok) = answer else { throw unexpected(answer, "PATCH_OK") }
        return ok
    }


    var receiveLimit: UInt32 { core.receiveLimit }
}
