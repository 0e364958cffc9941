import ChecklistModel
import ChecklistStore
import ChecklistWire

/// A batch of `ListCommit`s turned into one column array per table, for the
/// `unnest` statements of `Statements`. Pure: no I/O.
struct CommitColumns {
    struct ListColumns {
        var ids: [Int64?] = [], bases: [Int64?] = [], namespaces: [String?] = []
        var names: [String?] = [], icons: [String?] = [], nameBytes: [[UInt8]?] = [], iconBytes: [[UInt8]?] = []
        var itemCounts: [Int64?] = [], uncheckedCounts: [Int64?] = [], revisions: [Int64?] = [], nextItemIDs: [Int64?] = []
        /// The bytes of the change bodies each list's commits add (`lists.change_bytes`).
        var changeBytes: [Int64?] = []
        /// `lists.row_bytes` (nil: keep the stored value).
        var rowBytes: [Int64?] = []
        var count: Int { ids.count }
    }

    /// What the quota check (`Statements.checkQuotas`) compares, one entry
    /// per list the batch creates, changes or deletes.
    struct QuotaColumns {
        var ids: [Int64?] = [], namespaces: [String?] = []
        /// The items the list is left with; nil when deleted.
        var itemCounts: [Int64?] = []
        /// Its name's and icon's UTF-8 bytes after the batch.
        var labelBytes: [Int64?] = []
        /// Its item texts' and client keys' bytes after the batch (nil: not known).
        var rowBytes: [Int64?] = []

        /// The distinct namespaces, in the order first met.
        var touchedNamespaces: [String] {
            var seen = Set<String>()
            return namespaces.compactMap { $0 }.filter { seen.insert($0).inserted }
        }
    }

    var updated = ListColumns()
    var created = ListColumns()
    var deleted = ListColumns()
    var createdNamespaces: [String?] = []
    var quota = QuotaColumns()
    var highestCreated: Int64 = 0
    var changeLists: [Int64?] = [], changeRevisions: [Int64?] = [], changeNamespaces: [String?] = []
    var changeKinds: [Int64?] = [], changeBodies: [[UInt8]?] = []
    var answerNamespaces: [String?] = [], answerClients: [Int64?] = [], answerSequences: [Int64?] = []
    var answerLists: [Int64?] = [], answerRevisions: [Int64?] = [], answerInserted: [[UInt8]?] = []

    /// Folds the commits of each list into one transition (first base, last
    /// state) and collects every change and answer.
    ///
    /// - Throws: `MISUSE` when a list's commits do not follow each other
    ///   (a base that is not the previous commit's revision).
    init(_ commits: [ListCommit]) throws(PostgresError) {
        // Each list's commits (indices into `commits`), lists in the order
        // of their first commit: one pass, not one per list.
        var order: [ListID] = []
        var byList: [ListID: [Int]] = [:]
        for (i, commit) in commits.enumerated() {
            if let previous = byList[commit.list]?.last {
                guard commits[previous].revision == commit.priorRevision else {
                    throw PostgresError(.misuse, "list \(commit.list): a commit on revision \(commit.priorRevision) follows one that left \(commits[previous].revision)")
                }
            } else {
                order.append(commit.list)
            }
            byList[commit.list, default: []].append(i)
            if let answer = commit.answer { try addAnswer(answer, namespace: commit.namespace) }
        }
        for id in order {
            guard let indices = byList[id], let start = indices.first, let end = indices.last else { continue }
            var bytes = 0
            if commits[end].after == nil {
                // A deleted list keeps only its deletion as history.
                if let deletion = commits[end].changes.last { bytes += try addChange(deletion) }
            } else {
                for i in indices {
                    for change in commits[i].changes { bytes += try addChange(change) }
                }
            }
            try addTransition(start: commits[start], end: commits[end], changeBytes: Int64(bytes))
            try addQuotaEntry(start: commits[start], end: commits[end])
        }
    }

    private mutating func addTransition(start: ListCommit, end: ListCommit, changeBytes: Int64) throws(PostgresError) {
        let namespace = try StoredText.namespace(start.namespace)
        let id = try PostgresValue.exactInt64(start.list.rawValue, "list id")
        switch (start.priorRevision, end.after) {
        case (0, let after?):
            try Self.append(after, base: 0, namespace: namespace, changeBytes: changeBytes, rowBytes: end.rowBytes, to: &created)
            createdNamespaces.append(namespace)
            highestCreated = max(highestCreated, id)
        case (0, nil):
            break // created and deleted in one batch: only the deletion is kept
        case (let base, let after?):
            try Self.append(after, base: base, namespace: namespace, changeBytes: changeBytes, rowBytes: end.rowBytes, to: &updated)
        case (let base, nil):
            deleted.ids.append(id)
            deleted.bases.append(try PostgresValue.exactInt64(base, "revision"))
            deleted.namespaces.append(namespace)
        }
    }

    /// The list's entry for the quota check: nothing for a list created
    /// and deleted in the batch.
    private mutating func addQuotaEntry(start: ListCommit, end: ListCommit) throws(PostgresError) {
        guard start.priorRevision != 0 || end.after != nil else { return }
        quota.ids.append(try PostgresValue.exactInt64(start.list.rawValue, "list id"))
        quota.namespaces.append(try StoredText.namespace(start.namespace))
        if let after = end.after {
            quota.itemCounts.append(try PostgresValue.exactInt64(after.summary.itemCount, "item count"))
            quota.labelBytes.append(Int64(after.summary.name.utf8.count + after.summary.icon.utf8.count))
            quota.rowBytes.append(end.rowBytes.map(Int64.init))
        } else {
            quota.itemCounts.append(nil)
            quota.labelBytes.append(nil)
            quota.rowBytes.append(nil)
        }
    }

    /// The parameters of `Statements.checkQuotas` for `quotas`.
    func quotaParameters(_ quotas: NamespaceQuotas) -> [PostgresValue] {
        func bound(_ value: Int?) -> PostgresValue { value.map { .int64(Int64($0)) } ?? .null }
        return [.textArray(quota.touchedNamespaces), bound(quotas.lists), bound(quotas.items), bound(quotas.bytes),
                .int64Array(quota.ids), .textArray(quota.namespaces), .int64Array(quota.itemCounts),
                .int64Array(quota.labelBytes), .int64Array(quota.rowBytes)]
    }

    private static func append(_ list: ExportedList, base: Revision, namespace: String, changeBytes: Int64,
                               rowBytes: Int?, to columns: inout ListColumns) throws(PostgresError) {
        let name = StoredText.columns(list.summary.name)
        let icon = StoredText.columns(list.summary.icon)
        columns.ids.append(try PostgresValue.exactInt64(list.summary.id.rawValue, "list id"))
        columns.bases.append(try PostgresValue.exactInt64(base, "revision"))
        columns.namespaces.append(namespace)
        columns.names.append(name.text)
        columns.icons.append(icon.text)
        columns.nameBytes.append(name.exact)
        columns.iconBytes.append(icon.exact)
        columns.itemCounts.append(try PostgresValue.exactInt64(list.summary.itemCount, "item count"))
        columns.uncheckedCounts.append(try PostgresValue.exactInt64(list.summary.uncheckedCount, "unchecked count"))
        columns.revisions.append(try PostgresValue.exactInt64(list.summary.revision, "revision"))
        columns.nextItemIDs.append(try PostgresValue.exactInt64(list.nextItemID.rawValue, "next item id"))
        columns.changeBytes.append(changeBytes)
        columns.rowBytes.append(rowBytes.map(Int64.init))
    }

    /// Adds `change` to the changes written; returns its body's size.
    private mutating func addChange(_ change: Change) throws(PostgresError) -> Int {
        var writer = WireWriter(capacity: 128)
        change.encode(into: &writer)
        changeLists.append(try PostgresValue.exactInt64(change.list.rawValue, "list id"))
        changeRevisions.append(try PostgresValue.exactInt64(change.revision, "revision"))
        changeNamespaces.append(try StoredText.namespace(change.namespace))
        changeKinds.append(Int64(writer.bytes[0]))
        changeBodies.append(writer.bytes)
        return writer.bytes.count
    }

    private mutating func addAnswer(_ remembered: RememberedAnswer, namespace: Namespace) throws(PostgresError) {
        answerNamespaces.append(try StoredText.namespace(namespace))
        answerClients.append(Int64(bitPattern: remembered.client))
        answerSequences.append(try PostgresValue.exactInt64(remembered.answer.sequence, "sequence"))
        answerLists.append(try PostgresValue.exactInt64(remembered.answer.list.rawValue, "list id"))
        answerRevisions.append(try PostgresValue.exactInt64(remembered.answer.revision, "revision"))
        answerInserted.append(InsertedRuns.encode(remembered.answer.inserted))
    }

    /// The change bodies written, per list in revision order.
    var bodiesByList: StoredBodies {
        var bodies: StoredBodies = [:]
        for (list, body) in zip(changeLists, changeBodies) {
            if let list, let body { bodies[ListID(UInt64(list)), default: []].append(body) }
        }
        return bodies
    }

    /// The parameters of `Statements.updateLists`.
    var updateParameters: [PostgresValue] {
        let c = updated
        return [.int64Array(c.ids), .int64Array(c.bases), .textArray(c.namespaces), .textArray(c.names),
                .textArray(c.icons), .byteaArray(c.nameBytes), .byteaArray(c.iconBytes), .int64Array(c.itemCounts),
                .int64Array(c.uncheckedCounts), .int64Array(c.revisions), .int64Array(c.nextItemIDs),
                .int64Array(c.changeBytes), .int64Array(c.rowBytes)]
    }

    /// The parameters of `Statements.insertLists`.
    var insertParameters: [PostgresValue] {
        let c = created
        return [.int64Array(c.ids), .textArray(c.namespaces), .textArray(c.names), .textArray(c.icons),
                .byteaArray(c.nameBytes), .byteaArray(c.iconBytes), .int64Array(c.itemCounts),
                .int64Array(c.uncheckedCounts), .int64Array(c.revisions), .int64Array(c.nextItemIDs),
                .int64Array(c.changeBytes), .int64Array(c.rowBytes)]
    }
}

/// The item-id runs of an answer as stored in `idempotency_answers.inserted`:
/// a varint count, then each run's first id and length as varints (the
/// encoding of SNAPSHOT.md section 3.8's runs).
enum InsertedRuns {
    static func encode(_ runs: [ItemIDRun]) -> [UInt8] {
        var w = WireWriter(capacity: 1 + runs.count * 4)
        w.writeVarint(UInt64(runs.count))
        for run in runs {
            w.writeVarint(run.first.rawValue)
            w.writeVarint(run.count)
        }
        return w.bytes
    }

    static func decode(_ bytes: [UInt8]) throws(PostgresError) -> [ItemIDRun] {
        do {
            return try WireReader.decode(bytes) { r throws(ChecklistError) in
                let count = try r.readCount("runs", max: r.remaining / 2)
                return try (0..<count).map { _ throws(ChecklistError) in
                    ItemIDRun(first: ItemID(try r.readVarint("first")), count: try r.readVarint("count"))
                }
            }
        } catch {
            throw PostgresError(.corruptData, "stored inserted ids: \(error)")
        }
    }
}
