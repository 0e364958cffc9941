import ChecklistModel
import ChecklistStore

/// One list's part of a commit: the changes the store applied to it, the
/// list they leave, and the answer to remember with them.
public struct ListCommit: Hashable, Sendable {
    public var namespace: Namespace
    public var list: ListID
    /// The list's committed revision before the changes (what the database
    /// held when they were made); 0 when they create the list. The database
    /// must still be at it, or the batch fails (`STALE_REVISION`). Not a
    /// PATCH's `baseRevision`, the revision a client asks the list to be at.
    public var priorRevision: Revision
    /// The list's changes in revision order, `priorRevision + 1` onwards.
    public var changes: [Change]
    /// The list after the changes; nil when they deleted it.
    public var after: ExportedList?
    /// The idempotency answer a keyed PATCH gave, remembered in the same
    /// transaction as its change (exactly-once across a node's loss).
    public var answer: RememberedAnswer?
    /// With `after`: the UTF-8 bytes of the list's item texts and client
    /// keys it leaves (`lists.row_bytes`, what a quota counts); nil when
    /// not known (its rows are not in memory), keeping the stored value.
    public var rowBytes: Int?

    public init(namespace: Namespace, list: ListID, priorRevision: Revision, changes: [Change],
                after: ExportedList?, answer: RememberedAnswer? = nil, rowBytes: Int? = nil) {
        self.namespace = namespace
        self.list = list
        self.priorRevision = priorRevision
        self.changes = changes
        self.after = after
        self.answer = answer
        self.rowBytes = rowBytes
    }

    /// The revision the commit leaves the list at.
    public var revision: Revision { after?.summary.revision ?? changes.last?.revision ?? priorRevision }
}

/// A client's answered key, as `idempotency_answers` keeps it.
public struct RememberedAnswer: Hashable, Sendable {
    public var client: UInt64
    public var answer: IdempotencyMemory.Answer

    public init(client: UInt64, answer: IdempotencyMemory.Answer) {
        self.client = client
        self.answer = answer
    }
}
