/// One committed change to the store. Every mutation goes through the store's
/// single apply path and yields exactly one `Change`; the write-ahead log,
/// subscriber pushes and the change feed are all built from these.
public struct Change: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        case listCreated(name: String, icon: String)
        case listUpdated(name: String, icon: String)
        case listDeleted
        case patched([AppliedOperation])
        /// The whole list was set by an import (IMPORT, `checklistd import`):
        /// created with this id when absent, otherwise everything it held
        /// replaced. Its revision may move up by more than one (an import
        /// keeps the revision the snapshot gives, when that is higher).
        case listImported(ImportedList)
    }

    public var namespace: Namespace
    public var list: ListID
    /// The list's revision after this change.
    public var revision: Revision
    public var kind: Kind
    /// The idempotency key of the PATCH this change applied, if it carried
    /// one (always nil for other kinds). Recorded so that replaying the log
    /// rebuilds the server's memory of answered keys (Protocol/SPEC.md
    /// section 9): a retry after a restart is still answered, not re-applied.
    public var idempotencyKey: IdempotencyKey?

    public init(namespace: Namespace, list: ListID, revision: Revision, kind: Kind,
                idempotencyKey: IdempotencyKey? = nil) {
        self.namespace = namespace
        self.list = list
        self.revision = revision
        self.kind = kind
        self.idempotencyKey = idempotencyKey
    }
}
