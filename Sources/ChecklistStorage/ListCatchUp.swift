import ChecklistModel
import ChecklistPostgres
import ChecklistStore

/// Brings one list of a node's cache up to what the database holds, on a
/// database thread (the follower's or the committer's): the one place
/// where other nodes' commits enter the cache (docs/POSTGRES.md, "Several
/// nodes"). Either the changes after the node's committed revision are
/// replayed (`follow`), or the list is loaded whole and replaces the cached
/// one (`reload`); both publish what they add, in revision order, through
/// the `CommittedView`.
struct ListCatchUp {
    let store: Store
    let view: CommittedView
    /// Told the committed revisions of the lists caught up (the list cache).
    var onCaughtUp: @Sendable ([(ListID, Revision?)]) -> Void = { _ in }
    /// Changes read per round of `follow`.
    static let batch = 1000

    enum Outcome: Equatable {
        /// The cache holds what the database held when read.
        case caughtUp
        /// More changes wait: call again.
        case more
        /// The cache holds changes of this node not committed yet: its
        /// committer settles them first; call again later.
        case deferred
    }

    /// Replays the changes after the node's committed revision of `list`,
    /// when the cache holds nothing of its own on top; reloads the list
    /// when the changes are not all there (trimmed, imported) or do not fit.
    ///
    /// - Parameter noticed: the revision a commit notice announced (0:
    ///   none); when the node knows that one committed already (its
    ///   committer caught the list up rebasing a commit of its own), nothing
    ///   is read.
    func follow(_ list: ListID, database: PostgresStore, noticed: Revision = 0) throws -> Outcome {
        // Every list asked for has an outcome.
        try follow([(list, noticed)], database: database)[list] ?? .more
    }

    /// `follow` for each of `lists` (each with the revision a notice
    /// announced, or 0), with one read for all of them: the changes after
    /// each one's committed revision, at most `batch` a list, in one
    /// statement. A list whose notices carried every change from its
    /// committed revision to the one announced (`carried`) is replayed from
    /// those, without a read. A list that needs more than the replay of
    /// what was read (a reload, a summary-only list) reads what it needs itself.
    func follow(_ lists: [(list: ListID, noticed: Revision)], database: PostgresStore,
                carried: [ListID: [Change]] = [:]) throws -> [ListID: Outcome] {
        var outcomes: [ListID: Outcome] = [:]
        var reading: [ListID: Revision] = [:]
        var replaying: [(list: ListID, known: Revision, carried: [Change]?)] = []
        for (list, noticed) in lists {
            switch start(list, noticed: noticed) {
            case .settled(let outcome): outcomes[list] = outcome
            case .read(let known):
                let run = Self.carriedRun(carried[list] ?? [], after: known, through: noticed)
                if run == nil { reading[list] = known }
                replaying.append((list, known, run))
            }
        }
        let read = try database.changes(after: reading, limit: Self.batch)
        for (list, known, run) in replaying.sorted(by: { $0.list.rawValue < $1.list.rawValue }) {
            outcomes[list] = try replay(list, run ?? read[list] ?? [], after: known, database: database)
        }
        return outcomes
    }

    /// The changes of `carried` after `known` when they run from `known + 1`
    /// to at least `noticed` (a revision a notice announced), at most
    /// `batch` of them; nil otherwise (the database is read instead).
    static func carriedRun(_ carried: [Change], after known: Revision, through noticed: Revision) -> [Change]? {
        guard noticed > known, let start = carried.firstIndex(where: { $0.revision > known }) else { return nil }
        let run = carried[start...]
        guard run.first?.revision == known + 1, let last = run.last, last.revision >= noticed, run.count <= batch else { return nil }
        return Array(run)
    }

    /// What `follow` starts from.
    private enum Start {
        /// Nothing to read.
        case settled(Outcome)
        /// Read the changes after this committed revision.
        case read(after: Revision)
    }

    private func start(_ list: ListID, noticed: Revision) -> Start {
        let known = view.revision(of: list) ?? 0
        if noticed > 0, known >= noticed { return .settled(.caughtUp) }
        // Commits of the node's own in flight: nothing is read (it could not
        // be replayed); its committer catches the list up when it commits them
        // (`CrossNodeRebase`), or a later round does once they settled.
        if known > 0, let cached = store.cachedRevision(of: list), cached > known, store.isResident(list) { return .settled(.deferred) }
        return .read(after: known)
    }

    /// Replays `changes`, read after the node's committed revision `known`
    /// of `list` (at most `batch` of them), or reloads the list when they
    /// do not follow it or do not fit.
    private func replay(_ list: ListID, _ changes: [Change], after known: Revision, database: PostgresStore) throws -> Outcome {
        guard let first = changes.first else {
            let stored = try database.list(list)?.summary.revision
            if stored == nil && known == 0 && store.cachedRevision(of: list) == nil { return .caughtUp }
            if stored == known && known > 0 { return .caughtUp }
            return try reload(list, database: database, force: false) ? .caughtUp : .deferred
        }
        if store.cachedRevision(of: list) != nil, !store.isResident(list) {
            return try followSummary(list, changes, database: database)
        }
        let imported = if case .listImported = first.kind { true } else { false }
        guard first.revision == known + 1 || imported else {
            return try reload(list, database: database, force: false) ? .caughtUp : .deferred
        }
        do {
            guard try store.replayFollowed(changes, expecting: known, underLock: { view.advance($0) }) else { return .deferred }
        } catch {
            return try reload(list, database: database, force: false) ? .caughtUp : .deferred
        }
        onCaughtUp([(list, view.revision(of: list))])
        return changes.count == Self.batch ? .more : .caughtUp
    }

    /// A list the cache holds summary-only (`--cache-bytes`): its summary
    /// moves to the database's and the changes are published; its rows are
    /// read when a request needs them.
    private func followSummary(_ list: ListID, _ changes: [Change], database: PostgresStore) throws -> Outcome {
        let expected = changes.last?.revision
        guard let stored = try database.list(list) else {
            store.replaceList(list, from: nil, if: { _ in true }) { view.reset(list, to: nil, publishing: changes) }
            onCaughtUp([(list, nil)])
            return .caughtUp
        }
        // The summary read may be newer than the changes: publish those, read again next round.
        let caughtUp = stored.summary.revision == expected || changes.count == Self.batch
        guard store.installUnloaded(stored) else { return .deferred }  // loaded meanwhile: replay next round
        store.withExportedLists { _ in view.advance(changes) }
        if stored.summary.revision != expected { view.reset(list, to: expected, publishing: []) }
        onCaughtUp([(list, view.revision(of: list))])
        return caughtUp && changes.count < Self.batch ? .caughtUp : .more
    }

    /// Loads `list` whole from the database and puts it in place of the
    /// cached one (dropping it if the database has none), publishing the
    /// committed changes since the node's committed revision when they are
    /// all stored. Unless `force`, only when the cache holds nothing of its
    /// own (the committer forces it after its commit of the list was lost,
    /// running `underLock` in the same hold of the store's lock).
    ///
    /// - Returns: whether the list was replaced.
    @discardableResult
    func reload(_ list: ListID, database: PostgresStore, force: Bool, underLock: () -> Void = {}) throws -> Bool {
        // Known before the load: a commit of this node published after the
        // load's snapshot makes the list move past `known`, so the older
        // load does not replace it (it would drop an acknowledged change
        // and take the committed revision back behind the feed).
        let known = view.revision(of: list)
        let source = Store()
        let sink = StoreRestoreSink(store: source)
        _ = try database.loadList(list, into: sink) { change in try source.replay(change) }
        let loaded = source.cachedRevision(of: list)
        var publish: [Change] = []
        let from = known ?? 0
        if loaded.map({ $0 > from }) ?? (known != nil) {
            let limit = loaded.map { Int(clamping: $0 - from) } ?? Self.batch
            let read = try database.changes(of: list, after: from, limit: limit)
            let deleted = if case .listDeleted = read.last?.kind { true } else { false }
            if read.first?.revision == from + 1, read.last?.revision == loaded || (loaded == nil && deleted) { publish = read }
        }
        let replaced = store.replaceList(list, from: source, if: { cached in
            force || ((cached ?? 0) == from && view.revision(of: list) == known)
        }, underLock: {
            view.reset(list, to: loaded, publishing: publish)
            underLock()
        })
        if replaced {
            store.restoreIdempotency(source.idempotencyMemory())
            onCaughtUp([(list, loaded)])
        }
        return replaced
    }
}
