import ChecklistModel

/// What one namespace may hold (`checklistd --quota-lists`, `--quota-items`;
/// Protocol/SPEC.md section 4.1). Nil: no bound.
public struct NamespaceQuotas: Sendable, Hashable {
    /// Lists of the namespace.
    public var lists: Int?
    /// Items of all the namespace's lists together.
    public var items: Int?
    public init(lists: Int? = nil, items: Int? = nil) {
        self.lists = lists
        self.items = items
    }
}

extension Store {
    /// Bounds what each namespace may hold from now on. A CREATE_LIST or
    /// PATCH that would pass a bound is refused whole with
    /// `QUOTA_EXCEEDED` (field `lists` or `items`); one that deletes as
    /// much as it adds, or more, always passes; replays and imports are
    /// not bounded.
    public func setQuotas(_ quotas: NamespaceQuotas) {
        locked { $0.quotas = quotas }
    }
}

extension StoreState {
    /// Refuses a new list of `ns` at its list quota.
    func checkListQuota(in ns: Namespace) throws(ChecklistError) {
        guard let quota = quotas.lists else { return }
        let held = listIDs[ns]?.count ?? 0
        guard held < quota else {
            throw ChecklistError(.quotaExceeded, "the namespace holds \(held) lists, its quota", field: "lists")
        }
    }

    /// Refuses `ops` if, applied, they would leave `ns` with more items
    /// than its quota. All or nothing: when the batch applies, its item
    /// count changes by exactly inserts - deletes.
    func checkItemQuota(_ ops: [PatchOperation], in ns: Namespace) throws(ChecklistError) {
        guard let quota = quotas.items else { return }
        var added = 0
        for op in ops {
            switch op {
            case .insert: added += 1
            case .delete: added -= 1
            default: break
            }
        }
        guard added > 0 else { return }
        let held = (listIDs[ns] ?? []).reduce(0) { $0 + (lists[$1]?.itemCount ?? 0) }
        guard held + added <= quota else {
            throw ChecklistError(.quotaExceeded, "the namespace holds \(held) items; \(added) more would pass its quota of \(quota)",
                                 field: "items")
        }
    }
}
