import ChecklistStorage
import ChecklistModel
import ChecklistWire

extension Request {
    /// The lists whose rows (or loaded history) answering this request
    /// needs in memory: what a PostgreSQL node loads before it dispatches
    /// the request (`ListCache`). GET_PAGE and PATCH read or change the
    /// list's rows, CHANGES_SINCE and a SUBSCRIBE entry that catches up
    /// read the history a load retains, EXPORT START cuts the lists it
    /// names (every list of the namespace when it names none, given by
    /// `allLists`). Renames, deletions and LIST_LISTS need summaries only.
    func listsNeedingRows(allLists: () -> [ListID]) -> [ListID] {
        switch self {
        case .getPage(let m): return [m.list]
        case .patch(let m): return [m.list]
        case .changesSince(let m): return [m.list]
        case .subscribe(let m): return m.entries.compactMap { $0.revision == nil ? nil : $0.list }
        case .export(let m):
            guard case .start(_, let lists) = m.action else { return [] }
            return lists.isEmpty ? allLists() : lists
        default: return []
        }
    }
}
