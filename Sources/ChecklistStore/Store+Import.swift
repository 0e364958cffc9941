import ChecklistModel

/// How an import meets the lists already there.
public enum ImportMode: UInt8, Hashable, Sendable {
    /// Lists of the import are added, or replace the list with their id;
    /// other lists stay.
    case merge = 0
    /// The namespace (or, offline, the store) holds exactly the import's
    /// lists afterwards: every other list is deleted.
    case replace = 1
}

/// What an import did.
public struct ImportResult: Hashable, Sendable {
    /// One imported list.
    public struct Entry: Hashable, Sendable {
        /// Its id in the snapshot.
        public var sourceID: ListID
        /// Its id in the store now.
        public var id: ListID
        /// Its revision in the store now.
        public var revision: Revision
        public var itemCount: UInt64
        /// It replaced the list that had this id.
        public var replaced: Bool

        public init(sourceID: ListID, id: ListID, revision: Revision, itemCount: UInt64, replaced: Bool) {
            self.sourceID = sourceID
            self.id = id
            self.revision = revision
            self.itemCount = itemCount
            self.replaced = replaced
        }
    }

    /// The imported lists, in snapshot order.
    public var lists: [Entry]
    /// Lists deleted because the mode was `.replace`, ascending.
    public var deleted: [ListID]
    /// Items imported, in all lists.
    public var itemCount: UInt64

    public init(lists: [Entry], deleted: [ListID], itemCount: UInt64) {
        self.lists = lists
        self.deleted = deleted
        self.itemCount = itemCount
    }
}

// Imports: whole lists in, atomically.
extension Store {
    /// Most lists one import may hold (`LIMIT_EXCEEDED lists` beyond).
    public static let defaultMaxImportLists = 100_000

    /// An empty staging for `importLists`, with this store's row layout.
    ///
    /// - Parameter enforcingLimits: check names, icons and texts against
    ///   `limits.maxTextBytes` (over the protocol, the same rule as for
    ///   lists created by requests); false for an operator's offline import.
    public func makeImportStaging(enforcingLimits: Bool = true, maxLists: Int = Store.defaultMaxImportLists) -> ImportStaging {
        ImportStaging(limits: enforcingLimits ? limits : nil, shape: treeShape, maxLists: maxLists)
    }

    /// Applies a whole staged import atomically: under one lock, every list
    /// of it is applied (and, with `.replace`, the other lists deleted), or
    /// none: every check but the namespace's quotas was made while staging.
    ///
    /// - Throws: `QUOTA_EXCEEDED` (field `lists`, `items` or `bytes`) when
    ///   the namespace would hold more than a quota allows afterwards, and
    ///   more than it holds now (`setQuotas`); nothing is applied then.
    ///
    /// Ids (list ids are store-wide and never reused):
    /// - a list whose snapshot id names a list of the same namespace
    ///   replaces it and keeps the id; its revision becomes the higher of
    ///   the old revision + 1 and the snapshot's (revisions never go down);
    /// - a list whose snapshot id was never handed out (at or above the
    ///   next list id, below 2^53) keeps that id and the snapshot's revision;
    /// - any other list (an id deleted before, or owned by another
    ///   namespace) gets the next list id, and the snapshot's revision.
    ///
    /// Every list set is one `Change` of kind `listImported`, every list
    /// deleted one `listDeleted`; they are one commit: `onCommitGroup` gets
    /// them in one call (`onCommit` one after the other, under the same
    /// lock, with no other change between them).
    ///
    /// - Parameter namespace: the namespace every list goes to (over the
    ///   protocol: the connection's); nil keeps each list's own and makes
    ///   `.replace` apply to the whole store (offline).
    @discardableResult
    public func importLists(_ staging: ImportStaging, mode: ImportMode, namespace: Namespace?) throws(ChecklistError) -> ImportResult {
        var staging = staging
        if !staging.isSealed { staging.seal() }
        return try locked { state throws(ChecklistError) in
            let (changes, result) = try state.applyImport(staging, mode: mode, namespace: namespace)
            if !changes.isEmpty { onCommit(changes) }
            return result
        }
    }
}
