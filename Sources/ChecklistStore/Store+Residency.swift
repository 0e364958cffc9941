import ChecklistModel

/// Where a list's rows are (`Store.residency(of:in:)`).
public enum ListResidency: Sendable, Hashable {
    /// The list and its rows are in memory.
    case resident
    /// The list is known by its summary only (LIST_LISTS shows it, counts
    /// and revision exact); its rows must be loaded before they are read
    /// or changed.
    case unloaded
    /// No such list in the namespace.
    case absent
}

/// What `Store.installLoaded(_:from:)` did.
public enum LoadedListInstall: Sendable, Hashable {
    /// The loaded rows replaced the summary-only list.
    case installed
    /// The list is at another revision than the loaded one (it changed
    /// after the load read it): nothing installed; load it again.
    case revisionMoved(current: Revision)
    /// The list is resident already (nothing to do) or gone (deleted).
    case notNeeded
}

// Residency: a store that keeps its lists in a database (a PostgreSQL
// node's cache) holds some lists by their summary only and their rows
// elsewhere. These calls move lists between the two states; each is one
// atomic step under the store's lock, so a reader sees a list either
// whole or summary-only, never half loaded. The apply path and pages
// refuse a summary-only list's rows with UNAVAILABLE (`ListState.requireRows`);
// renames and deletions work on it as on any list.
extension Store {
    /// Whether list `list` of `ns` is in memory with its rows.
    public func residency(of list: ListID, in ns: Namespace) -> ListResidency {
        reading { state in
            guard let index = state.lists.index(forKey: list), state.lists.values[index].namespace == ns else { return .absent }
            return state.lists.values[index].unloaded == nil ? .resident : .unloaded
        }
    }

    /// Whether list `list` (of any namespace) is in memory with its rows;
    /// false for a summary-only list and for no list at all.
    public func isResident(_ list: ListID) -> Bool {
        reading { state in state.lists[list].map { $0.unloaded == nil } ?? false }
    }

    /// Adds a list by its summary alone (its rows stay in the database):
    /// LIST_LISTS shows it with these counts and revision. A list already
    /// held summary-only is replaced (a follower moving its summary to a
    /// commit another node made). No change is committed and `onCommit` is
    /// not called.
    ///
    /// - Returns: false, changing nothing, when the list is resident: apply
    ///   the change to its rows instead (`replay`).
    @discardableResult
    public func installUnloaded(_ list: ExportedList) -> Bool {
        locked { state in
            if let index = state.lists.index(forKey: list.summary.id) {
                guard state.lists.values[index].unloaded != nil else { return false }
                _ = state.remove(at: index)
            }
            state.add(Self.unloadedState(list, shape: treeShape))
            return true
        }
    }

    /// Drops the rows of a resident list, keeping its summary (it becomes
    /// summary-only), if it is at `revision`: the caller passes the revision
    /// the database holds, so rows with changes not yet committed are never
    /// dropped. Pages already resolved keep reading their shares of the rows.
    ///
    /// - Returns: whether the rows were dropped.
    @discardableResult
    public func evict(_ list: ListID, ifAt revision: Revision) -> Bool {
        locked { state in
            guard let index = state.lists.index(forKey: list), state.lists.values[index].unloaded == nil,
                  state.lists.values[index].revision == revision else { return false }
            let exported = state.lists.values[index].exported
            let rowBytes = state.inPlace(index) { $0.rows.textBytes + $0.keys.keyBytes }
            state.lists.values[index] = Self.unloadedState(exported, shape: treeShape)
            state.lists.values[index].unloaded?.storedBytes = rowBytes
            return true
        }
    }

    /// Moves list `list` out of `loaded` (a private store the list was
    /// loaded into: checkpoint and replayed changes) into this store, where
    /// it replaces the summary-only list, if that is at the loaded list's
    /// revision. `loaded` loses the list either way. The answers of the
    /// keyed patches the load replayed come along into this store's
    /// idempotency memory (another node may have committed them: a retry
    /// sent here is answered, not applied again).
    public func installLoaded(_ list: ListID, from loaded: Store) -> LoadedListInstall {
        let (taken, keys) = loaded.locked { state -> (ListState?, IdempotencyMemory) in
            (state.lists.index(forKey: list).map { state.remove(at: $0) }, state.idempotency.memory)
        }
        guard let taken else { return .notNeeded }
        return locked { state in
            guard let index = state.lists.index(forKey: list), state.lists.values[index].unloaded != nil,
                  state.lists.values[index].namespace == taken.namespace else { return .notNeeded }
            let current = state.lists.values[index].revision
            guard current == taken.revision else { return .revisionMoved(current: current) }
            state.lists.values[index] = taken
            state.idempotency.restore(keys)
            return .installed
        }
    }

    /// The lists whose rows are in memory, with their revisions, by id.
    public func residentLists() -> [(list: ListID, revision: Revision)] {
        reading { state in
            state.lists.values.filter { $0.unloaded == nil }.map { ($0.id, $0.revision) }.sorted { $0.list < $1.list }
        }
    }

    /// An estimate of the memory list `list`'s rows hold, in bytes; nil
    /// unless it is resident. `bytesPerRow` per row (ids, flags, text ends,
    /// the locator and leaf slack), `bytesPerClientKey` plus the key's bytes
    /// per client key, every row's text bytes, and `bytesPerList`. Cost: one
    /// step per leaf (about 128 rows), under the shared lock.
    public func residentBytes(of list: ListID) -> Int? {
        reading { state in
            guard let index = state.lists.index(forKey: list), state.lists.values[index].unloaded == nil else { return nil }
            return state.lists.values[index].estimatedBytes
        }
    }

    private static func unloadedState(_ list: ExportedList, shape: RowTreeShape) -> ListState {
        var state = ListState(id: list.summary.id, namespace: list.namespace, name: list.summary.name,
                              icon: list.summary.icon, revision: list.summary.revision,
                              nextItemID: list.nextItemID.rawValue,
                              rows: RowTree(leafCapacity: shape.leafCapacity, innerCapacity: shape.innerCapacity))
        state.unloaded = UnloadedCounts(itemCount: list.summary.itemCount, uncheckedCount: list.summary.uncheckedCount)
        return state
    }
}

/// The estimate `Store.residentBytes(of:)` makes (docs/POSTGRES.md, "The
/// cache"): per row 40 bytes of columns and structure (measured: 53 bytes
/// of resident memory per row of short texts), the text bytes themselves,
/// per client key 180 bytes of index entries plus the key (measured: about
/// 215 per 36-byte key), and 1 KiB per list.
extension ListState {
    static let bytesPerRow = 40
    static let bytesPerClientKey = 180
    static let bytesPerList = 1024

    var estimatedBytes: Int {
        var text = 0
        var keyBytes = 0
        for leaf in rows.leaves { text += leaf.arena.count + (leaf.dues.isEmpty ? 0 : 8 * leaf.count) + (leaf.prices.isEmpty ? 0 : 8 * leaf.count) }
        if !keys.isEmpty {
            for key in keys.keyByItem.values { keyBytes += key.utf8.count + Self.bytesPerClientKey }
        }
        return Self.bytesPerList + rows.count * Self.bytesPerRow + text + keyBytes
    }
}
