import ChecklistModel

// Whole lists set by an import: the live path (`applyImport`, every list of
// a staging at once) and the replay of one recorded `listImported` change.
// Both run under the store's lock.
extension StoreState {
    /// Ids at or above this are never kept from a snapshot (the list gets
    /// the next id instead), so that an import cannot push the store-wide
    /// counter near 2^64 or past what JSON readers hold exactly.
    static let maxKeptListID: UInt64 = 1 << 53

    /// Where one staged list goes.
    private enum Target {
        /// Replaces the list with this id (same namespace).
        case replace(ListID)
        /// A new list keeping its id from the snapshot (never handed out).
        case keep(ListID)
        /// A new list with the next id.
        case fresh
    }

    /// Applies every list of `staging` and, with `.replace`, deletes the
    /// other lists of the namespace (of the store, when `namespace` is nil).
    /// Fails, changing nothing, only when it would take the namespace past
    /// a quota (`QUOTA_EXCEEDED`): every other check was made while staging. Returns the changes
    /// in commit order (deletions by ascending id, then the imported lists
    /// in snapshot order) and what happened.
    mutating func applyImport(_ staging: ImportStaging, mode: ImportMode,
                              namespace: Namespace?) throws(ChecklistError) -> (changes: [Change], result: ImportResult) {
        let (ids, counter) = importedListIDs(staging, namespace: namespace)
        if let namespace, quotas.isBounded { try checkImportQuotas(staging, ids: ids, mode: mode, namespace: namespace) }
        var changes: [Change] = []
        var deleted: [ListID] = []
        if mode == .replace {
            (changes, deleted) = deleteLists(notIn: Set(ids), namespace: namespace)
        }
        var entries: [ImportResult.Entry] = []
        entries.reserveCapacity(ids.count)
        for (staged, id) in zip(staging.lists, ids) {
            let (change, entry) = setImportedList(staged, id: id, namespace: namespace ?? staged.header.namespace)
            changes.append(change)
            entries.append(entry)
        }
        nextListID = max(nextListID, counter)
        return (changes, ImportResult(lists: entries, deleted: deleted, itemCount: UInt64(staging.itemCount)))
    }

    /// Refuses the import if the namespace would hold more than a quota
    /// allows afterwards, and more than it holds now.
    private func checkImportQuotas(_ staging: ImportStaging, ids: [ListID], mode: ImportMode,
                                   namespace ns: Namespace) throws(ChecklistError) {
        let before = usage(of: ns)
        var after = mode == .replace ? NamespaceUsage() : before
        for (staged, id) in zip(staging.lists, ids) {
            if mode == .merge, let index = lists.index(forKey: id), lists.values[index].namespace == ns {
                let replaced = lists.values[index]
                after.lists -= 1
                after.items -= replaced.itemCount
                after.bytes -= replaced.storedBytes
            }
            let rows = staged.rows
            after.lists += 1
            after.items += rows.count
            after.bytes += staged.header.name.utf8.count + staged.header.icon.utf8.count + rows.textBytes + staged.keys.keyBytes
        }
        try checkImport(before: before, after: after)
    }

    /// The id each staged list gets, in snapshot order, and the next list
    /// id after them. Kept ids are decided first, so that the ids handed
    /// out to the others come after all of them.
    private func importedListIDs(_ staging: ImportStaging, namespace: Namespace?) -> (ids: [ListID], nextListID: UInt64) {
        var targets: [Target] = []
        targets.reserveCapacity(staging.lists.count)
        var counter = nextListID
        for staged in staging.lists {
            let ns = namespace ?? staged.header.namespace
            let source = staged.header.sourceID
            if let existing = lists[source], existing.namespace == ns {
                targets.append(.replace(source))
            } else if lists[source] == nil, source.rawValue >= nextListID, source.rawValue < Self.maxKeptListID {
                targets.append(.keep(source))
                counter = max(counter, source.rawValue + 1)
            } else {
                targets.append(.fresh)
            }
        }
        var ids: [ListID] = []
        ids.reserveCapacity(targets.count)
        for target in targets {
            switch target {
            case .replace(let id), .keep(let id):
                ids.append(id)
            case .fresh:
                ids.append(ListID(counter))
                counter += 1
            }
        }
        return (ids, counter)
    }

    /// A `.replace` import: deletes the lists of the namespace (of the
    /// store, when nil) that the import does not set, by ascending id.
    private mutating func deleteLists(notIn kept: Set<ListID>, namespace: Namespace?) -> (changes: [Change], deleted: [ListID]) {
        var changes: [Change] = []
        var deleted: [ListID] = []
        let scope: [ListID] = namespace.map { listIDs[$0] ?? [] } ?? lists.keys.sorted()
        for id in scope where !kept.contains(id) {
            guard let index = lists.index(forKey: id) else { continue }
            let list = remove(at: index)
            changes.append(Change(namespace: list.namespace, list: id, revision: list.revision + 1, kind: .listDeleted))
            deleted.append(id)
        }
        return (changes, deleted)
    }

    /// Puts one imported list in place as `id` (replacing the list with that
    /// id, whose revision it then passes: revisions never go down) and
    /// returns its change and its entry in the result.
    private mutating func setImportedList(_ staged: ImportStaging.StagedList, id: ListID,
                                          namespace ns: Namespace) -> (Change, ImportResult.Entry) {
        let header = staged.header
        var revision = header.revision
        var replaced = false
        if let index = lists.index(forKey: id) {
            revision = max(lists.values[index].revision + 1, header.revision)
            _ = remove(at: index)
            replaced = true
        }
        let state = ListState(id: id, namespace: ns, name: header.name, icon: header.icon, revision: revision,
                              nextItemID: header.nextItemID.rawValue, rows: staged.rows, keys: staged.keys)
        add(state)
        let rows = staged.rows
        let keys = staged.keys
        let items = ImportedItems(count: rows.count) { body in
            rows.forEachRow(filter: .all, from: 0, limit: rows.count) { row in
                row.withTextBytes { text in
                    body(ImportedItems.View(id: row.id, checked: row.checked, remind: row.remind, due: row.due,
                                            price: row.price, text: text, clientKey: keys.key(of: row.id)))
                }
            }
        }
        let change = Change(namespace: ns, list: id, revision: revision,
                            kind: .listImported(ImportedList(name: header.name, icon: header.icon,
                                                             nextItemID: header.nextItemID, items: items)))
        let entry = ImportResult.Entry(sourceID: header.sourceID, id: id, revision: revision,
                                       itemCount: UInt64(rows.count), replaced: replaced)
        return (change, entry)
    }

    /// Replays a recorded `listImported` change: the list (created if
    /// absent) becomes exactly what the change says. Its revision must be
    /// above the list's current one; a list of another namespace with that
    /// id, or bad item ids, refuse it and leave the store unchanged.
    mutating func applyImported(_ change: Change, _ imported: ImportedList) throws(ChecklistError) -> Commit {
        let id = change.list
        guard id.rawValue != 0 else { throw .badField("list", "list id must not be 0") }
        guard !imported.name.isEmpty else { throw .badField("name", "name must not be empty") }
        if let existing = lists[id] {
            guard existing.namespace == change.namespace else {
                throw ChecklistError(.conflict, "list id \(id) belongs to another namespace")
            }
            guard change.revision > existing.revision else {
                throw ChecklistError(.conflict, "import of list \(id) has revision \(change.revision), the list is at \(existing.revision)",
                                     revision: existing.revision)
            }
        }
        var builder = RowTreeBuilder(shape: treeShape)
        var keys = ClientKeyIndex()
        var failure: ChecklistError?
        imported.items.forEachView { item in
            guard failure == nil else { return }
            if item.id.rawValue == 0 || item.id >= imported.nextItemID || !builder.append(item) {
                failure = .badField("id", "item id \(item.id) of imported list \(id) is 0, repeated or not below \(imported.nextItemID)")
                return
            }
            if let key = item.clientKey {
                do throws(ChecklistError) { try keys.checkFree(key, for: item.id, in: id) } catch {
                    failure = error
                    return
                }
                keys.set(key, for: item.id)
            }
        }
        if let failure { throw failure }
        builder.finish()
        let rows = builder.result
        if let index = lists.index(forKey: id) { _ = remove(at: index) }
        let state = ListState(id: id, namespace: change.namespace, name: imported.name, icon: imported.icon,
                              revision: change.revision, nextItemID: imported.nextItemID.rawValue, rows: rows, keys: keys)
        add(state)
        return Commit(change: change, summary: state.summary)
    }
}
