import ChecklistModel
import ChecklistWire

/// What a `ChecklistSync` subscription reports, in order.
public enum ChangeEvent: Hashable, Sendable {
    /// A committed change. Per list, changes come in revision order, each
    /// exactly once, with no gap, across reconnects. A change of kind
    /// `.omitted` was too large to send: read the list again.
    case change(ListChange)
    /// The changes of `list` after the last one reported cannot be replayed
    /// (no longer retained by the server, or the server lost them), or the
    /// list appeared while the subscription was disconnected: read the list
    /// again (it is at least at `revision`); `.change` events continue after
    /// `revision`.
    case resyncRequired(list: ListID, revision: Revision)
    /// The list does not exist (any more): nothing more comes for it.
    case listNotFound(ListID)
    /// The connection was lost or the subscription dropped; it resumes from
    /// the last revisions reported once the server is back.
    case interrupted(String)
    /// Subscribed (again): the lists covered and the revision each is at.
    /// Comes first, and again after every `.interrupted` once resumed.
    case subscribed([ListID: Revision])
}
