import ChecklistStorage
import ChecklistModel
import ChecklistWire

extension Request {
    /// The revisions this request names that the node has not seen yet: a
    /// PostgreSQL node of several catches these lists up from the database
    /// before it handles the request (`ListLoadRequest.catchUp`), so that
    /// a revision committed through another node is never answered as if
    /// it did not exist (docs/POSTGRES.md, "Several nodes").
    ///
    /// A PATCH's `baseRevision` counts when it is above the list's revision
    /// in the store (`held`): one at or below it is answered at once
    /// (applied, or CONFLICT, stale for every node). A CHANGES_SINCE
    /// revision or a SUBSCRIBE entry's counts when it is above the list's
    /// committed revision (`committed`, what live sync takes as current).
    /// A list the store does not hold in the namespace (`held` nil) named
    /// with a revision counts too, from revision 1: another node may have
    /// created it (if not, it is answered NOT_FOUND after the look). GET_PAGE
    /// names no revision, nor does a PATCH without `baseRevision`: those
    /// are answered from what the node holds.
    func revisionsAhead(held: (ListID) -> Revision?, committed: (ListID, Revision) -> Revision) -> [ListID: Revision] {
        var ahead: [ListID: Revision] = [:]
        func note(_ list: ListID, _ revision: Revision, committedOnly: Bool) {
            let wanted: Revision
            if let cached = held(list) {
                guard revision > (committedOnly ? committed(list, cached) : cached) else { return }
                wanted = revision
            } else {
                wanted = max(revision, 1)
            }
            ahead[list] = max(ahead[list] ?? 0, wanted)
        }
        switch self {
        case .patch(let m):
            if let base = m.baseRevision { note(m.list, base, committedOnly: false) }
        case .changesSince(let m):
            note(m.list, m.revision, committedOnly: true)
        case .subscribe(let m):
            for entry in m.entries { if let revision = entry.revision { note(entry.list, revision, committedOnly: true) } }
        default:
            break
        }
        return ahead
    }
}
