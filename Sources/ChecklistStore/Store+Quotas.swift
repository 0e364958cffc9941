import ChecklistModel

/// What one namespace may hold (`checklistd --quota-lists`, `--quota-items`,
/// `--quota-bytes`; Protocol/SPEC.md section 4.1). Nil: no bound.
public struct NamespaceQuotas: Sendable, Hashable {
    /// Lists of the namespace.
    public var lists: Int?
    /// Items of all the namespace's lists together.
    public var items: Int?
    /// UTF-8 bytes of the namespace's list names, icons, item texts and
    /// client keys together (`NamespaceUsage.bytes`).
    public var bytes: Int?
    public init(lists: Int? = nil, items: Int? = nil, bytes: Int? = nil) {
        self.lists = lists
        self.items = items
        self.bytes = bytes
    }

    /// Whether any bound is set.
    public var isBounded: Bool { lists != nil || items != nil || bytes != nil }
}

/// What one namespace holds now: what its quotas bound.
public struct NamespaceUsage: Sendable, Hashable {
    public var lists: Int
    public var items: Int
    /// UTF-8 bytes of its list names, icons, item texts and client keys.
    public var bytes: Int
    public init(lists: Int = 0, items: Int = 0, bytes: Int = 0) {
        self.lists = lists
        self.items = items
        self.bytes = bytes
    }
}

extension Store {
    /// Bounds what each namespace may hold from now on. A CREATE_LIST,
    /// PATCH, UPDATE_LIST or import that would pass a bound is refused
    /// whole with `QUOTA_EXCEEDED` (field `lists`, `items` or `bytes`);
    /// one that adds no more than it removes always passes; replays are
    /// not bounded.
    public func setQuotas(_ quotas: NamespaceQuotas) {
        locked { $0.quotas = quotas }
    }

    /// The quotas set by `setQuotas`.
    public var quotas: NamespaceQuotas { reading { $0.quotas } }

    /// What `ns` holds now. O(lists of the namespace).
    public func usage(of ns: Namespace) -> NamespaceUsage {
        reading { $0.usage(of: ns) }
    }
}

extension StoreState {
    func usage(of ns: Namespace) -> NamespaceUsage {
        var usage = NamespaceUsage()
        for id in listIDs[ns] ?? [] {
            guard let index = lists.index(forKey: id) else { continue }
            let list = lists.values[index]
            usage.lists += 1
            usage.items += list.itemCount
            usage.bytes += list.storedBytes
        }
        return usage
    }

    /// Refuses a new list of `ns` (of `addedBytes` name and icon bytes) at its quotas.
    func checkNewListQuota(addedBytes: Int, in ns: Namespace) throws(ChecklistError) {
        guard quotas.lists != nil || quotas.bytes != nil else { return }
        let held = usage(of: ns)
        if let quota = quotas.lists, held.lists >= quota {
            throw ChecklistError(.quotaExceeded, "the namespace holds \(held.lists) lists, its quota", field: "lists")
        }
        try checkBytes(held.bytes, adding: addedBytes)
    }

    /// Refuses `ops` if, applied, they would leave `ns` with more items
    /// than its quota. All or nothing: when the batch applies, its item
    /// count changes by exactly inserts - deletes.
    func checkItemQuota(_ ops: ArraySlice<PatchOperation>, in ns: Namespace) throws(ChecklistError) {
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
        let held = usage(of: ns).items
        guard held + added <= quota else {
            throw ChecklistError(.quotaExceeded, "the namespace holds \(held) items; \(added) more would pass its quota of \(quota)",
                                 field: "items")
        }
    }

    /// Refuses a change that adds `added` bytes (negative: it frees some)
    /// to a namespace holding `held` before it, if that passes the byte
    /// quota. A change that adds nothing always passes.
    func checkBytes(_ held: Int, adding added: Int) throws(ChecklistError) {
        guard let quota = quotas.bytes, added > 0, held + added > quota else { return }
        throw ChecklistError(.quotaExceeded, "the namespace holds \(held) bytes of texts and keys; \(added) more would pass its quota of \(quota)",
                             field: "bytes")
    }

    /// Refuses an import that would leave `ns` holding `after` where it now
    /// holds `before`, past a quota it grows towards.
    func checkImport(before: NamespaceUsage, after: NamespaceUsage) throws(ChecklistError) {
        let rows: [(String, Int?, Int, Int)] = [("lists", quotas.lists, before.lists, after.lists),
                                                ("items", quotas.items, before.items, after.items),
                                                ("bytes", quotas.bytes, before.bytes, after.bytes)]
        for (field, quota, was, will) in rows {
            guard let quota, will > quota, will > was else { continue }
            throw ChecklistError(.quotaExceeded, "the import would leave the namespace with \(will) \(field); its quota is \(quota)",
                                 field: field)
        }
    }
}
