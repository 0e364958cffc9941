import ChecklistModel
import ChecklistWire

/// The database reads a parked request waits for (`ParkedRequest`): the
/// loader threads load the lists whose rows are not in memory,
/// then catch up the lists whose named revision the node has not seen yet,
/// then read the stored changes (docs/POSTGRES.md, "Several nodes").
package struct ListLoadRequest: Sendable, Hashable {
    package var namespace: Namespace
    /// The lists to load; the parked request holds pins on them.
    package var lists: [ListID]
    /// Lists whose revision the request names (a PATCH's `baseRevision`,
    /// a CHANGES_SINCE or SUBSCRIBE revision) above what the node holds:
    /// another node committed it and this node has not followed it yet.
    /// Each is brought up to at least that revision from the database, if
    /// the database holds it, before the request is resumed.
    package var catchUp: [ListID: Revision] = [:]
    /// A CHANGES_SINCE reaching back past the node's retained feed: its
    /// changes are read from the database's `changes` table.
    package var storedChanges: StoredChangesRead?
    /// A keyed PATCH this node refused while its key was unknown here: the
    /// database's idempotency memory is read for the key (another node may
    /// have answered it: a retry sent here), so that the request, handled
    /// again, gets that answer rather than a refusal of its own.
    package var keyLookUp: RetriedPatch?

    package init(namespace: Namespace, lists: [ListID], catchUp: [ListID: Revision] = [:],
                 storedChanges: StoredChangesRead? = nil, keyLookUp: RetriedPatch? = nil) {
        self.namespace = namespace
        self.lists = lists
        self.catchUp = catchUp
        self.storedChanges = storedChanges
        self.keyLookUp = keyLookUp
    }
}

/// A CHANGES_SINCE the node's feed does not reach back for, to be read
/// from the database (`ListLoading.readChanges`).
package struct StoredChangesRead: Sendable, Hashable {
    package var list: ListID
    package var namespace: Namespace
    /// The revision the client has: the changes after it are read.
    package var after: Revision
    /// The most changes read (the request's limit, at most `maxChanges`).
    package var limit: Int
    /// The frame size the changes are encoded for (`EncodedChange`).
    package var maxFrameBytes: UInt32

    /// The most changes one read takes from the database (the default
    /// retention per list); the client asks again from the last one.
    package static let maxChanges = 1000

    package init(list: ListID, namespace: Namespace, after: Revision, limit: Int, maxFrameBytes: UInt32) {
        self.list = list
        self.namespace = namespace
        self.after = after
        self.limit = limit
        self.maxFrameBytes = maxFrameBytes
    }
}

/// The changes a `StoredChangesRead` found in the database.
package enum StoredChanges: Sendable {
    /// The changes after the asked revision, oldest first, encoded as the
    /// node's feed holds them; they end at the list's revision in the
    /// database when it was read, or at the read's limit.
    case changes([EncodedChange])
    /// The database does not hold them all either (trimmed past its
    /// retention, or the list gone): RESYNC_REQUIRED stands.
    case notRetained
    /// The read did not happen (the database is unreachable, the node is
    /// shutting down): answered with this error (`UNAVAILABLE`,
    /// `SHUTTING_DOWN`), never as changes no longer retained, so the
    /// client retries instead of throwing its copy away.
    case unread(ChecklistError)
}

/// What the database reads for a parked request came to (`ListCache.prepare`).
package struct ListLoadOutcome: Sendable {
    /// Why a list could not be loaded: the parked request is answered with it.
    package var error: ChecklistError?
    /// The stored changes read for it, when it asked for them.
    package var storedChanges: StoredChanges?

    package init(error: ChecklistError? = nil, storedChanges: StoredChanges? = nil) {
        self.error = error
        self.storedChanges = storedChanges
    }
}
