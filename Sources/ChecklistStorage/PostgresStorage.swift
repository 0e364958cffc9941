import ChecklistLog
import ChecklistModel
import ChecklistPostgres
import ChecklistStore
import ChecklistThreads
import Synchronization

/// PostgreSQL as a server's storage (`ServerStorage`, docs/POSTGRES.md):
/// the stored lists are loaded into the store at start (whole, or as
/// summaries whose rows a `ListCache` loads on first use), and every commit
/// the store makes afterwards is queued for the committer thread
/// (`PostgresCommitter`), which commits everything queued as one
/// transaction (group commit) and then releases the answers of the whole
/// batch. Positions are a commit counter; durable means the transaction
/// committed. The event loops never touch the database.
///
/// When a transaction fails (the connection is lost, the backend killed,
/// a statement timeout), every position in it reads `.failed`: each answer
/// held for it is replaced by `ERROR UNAVAILABLE` whose outcome is unknown
/// (`AnswerHolder.outcomeUnknown`; the connection stays open). The
/// committer keeps the batch and commits it once the database is back, so
/// the node's cache and the database never part: a change answered that
/// way may still be committed later, never one that was acknowledged lost,
/// and a retry with its idempotency key gets the real answer once. While
/// the database is unreachable every new commit is refused at once (nothing
/// applied); reads of the cache go on.
///
/// A background upkeep thread (`PostgresUpkeep`) writes list checkpoints
/// and trims the change feed, so a start replays few changes.
public final class PostgresStorage: ServerStorage {
    /// What the start loaded.
    public struct LoadReport: Sendable, Hashable {
        public var lists: Int
        public var items: UInt64
        public var changesReplayed: Int
        public var schemaVersion: Int
        public var loadNanoseconds: UInt64
        /// Whether the database ever held a list (its list-id counter moved):
        /// `--seed-demo` seeds a database once, not after its lists were deleted.
        public var everHeldLists: Bool
    }

    public let load: LoadReport
    /// The cache of lists, when rows are loaded on first use.
    public let listCache: ListCache?
    private let loaders: PostgresListLoaders?
    private let waiters: CommitStates
    private let committer: PostgresCommitter
    private let upkeep: PostgresUpkeep
    private let follower: PostgresFollower
    /// What is committed per list; live sync publishes only that.
    private let view: CommittedView
    /// The answers of patches rebased onto other nodes' commits.
    private let rebasedAnswers: RebasedPatchAnswers
    /// The keys of patches whose commits are not durable yet.
    private let uncommittedKeys: UncommittedKeys
    /// The commit counter: the newest position given out by `append`.
    private let position = Atomic<UInt64>(0)

    /// Connects (at `conninfo`, a libpq connection string or URI), creates
    /// or migrates the schema, loads the stored lists into `store` (which
    /// must be empty and must not commit meanwhile) and starts the
    /// committer and upkeep threads.
    ///
    /// - Parameters:
    ///   - settings: the database threads' settings. `settings.cache` nil
    ///     loads every list whole, handing each replayed change (and the
    ///     retained changes a checkpoint holds) to `onReplayed` (offline
    ///     `export|import`). Given, only every
    ///     list's summary and the idempotency memory are loaded; rows come
    ///     on first use through the list cache (`listCache`, `--cache-bytes`),
    ///     whose loads hand their replayed changes to `retain`.
    /// - Throws: `PostgresError` `CONNECTION_FAILED` when the database
    ///   cannot be reached, `SCHEMA_TOO_NEW`, or what the load met.
    public init(conninfo: String, settings: PostgresSettings = PostgresSettings(), store: Store,
                onReplayed: (Change) -> Void = { _ in }, retain: @escaping @Sendable (Change) -> Void = { _ in }) throws {
        var cache = settings.cache
        if cache != nil, cache?.waitLimit == nil { cache?.waitLimit = settings.readReplyLimit }
        let started = monotonicNanoseconds()
        let database = try PostgresStore(connection: PostgresConnection(conninfo: conninfo))
        let migration = try database.migrate()
        // The answers of keyed patches a checkpoint holds are known only
        // from the table; the replayed changes add theirs on top.
        store.restoreIdempotency(try database.idempotencyMemory())
        var replayed = 0
        var committed: [ListID: Revision] = [:]
        var everHeld = false
        let lists: Int
        if cache != nil {
            let stored = try database.allLists()
            for list in stored {
                store.installUnloaded(list)
                committed[list.summary.id] = list.summary.revision
            }
            store.restoreNextListID(try database.nextListID())
            lists = stored.count
            everHeld = store.nextListID > ListID(1)
            // Creations take ids from blocks reserved for this node: two
            // nodes creating lists at once never pick the same id.
            let first = try database.reserveListIDs(PostgresCommitter.listIDBlock)
            store.addListIDs(first.rawValue..<first.rawValue + UInt64(PostgresCommitter.listIDBlock))
            // Lost commits of patches are applied again on top (`CrossNodeRebase`).
            store.keepPendingPatches()
        } else {
            let sink = StoreRestoreSink(store: store, holdingNextListID: true)
            let reports = try database.loadAll(into: sink, retained: onReplayed) { change in
                try store.replay(change)
                onReplayed(change)
                replayed += 1
            }
            sink.releaseNextListID()
            store.exportLists(in: nil) { list, _ in committed[list.summary.id] = list.summary.revision }
            lists = reports.count
            everHeld = store.nextListID > ListID(1)
        }
        let totals = store.totals()
        load = LoadReport(lists: lists, items: UInt64(totals.items), changesReplayed: replayed,
                          schemaVersion: migration.version, loadNanoseconds: monotonicNanoseconds() - started,
                          everHeldLists: everHeld)
        let waiters = CommitStates()
        self.waiters = waiters
        let view = CommittedView(committed)
        self.view = view
        let rebasedAnswers = RebasedPatchAnswers()
        self.rebasedAnswers = rebasedAnswers
        let uncommittedKeys = UncommittedKeys()
        self.uncommittedKeys = uncommittedKeys
        let node = UInt64.random(in: 1...UInt64.max)
        let upkeep = PostgresUpkeep(conninfo: conninfo, settings: settings, store: store, waiters: waiters,
                                    committedRevision: { [view] in view.revision(of: $0) })
        self.upkeep = upkeep
        if let cache {
            let listCache = ListCache(store: store, configuration: cache, committed: committed)
            let following = ListCatchUp(store: store, view: view) { revisions in listCache.committed(revisions) }
            let loaders = try PostgresListLoaders(conninfo: conninfo, store: store, cache: listCache, following: following,
                                                  replyLimits: (settings.loadReplyLimit, settings.readReplyLimit), retain: retain)
            listCache.setLoader(loaders)
            self.listCache = listCache
            self.loaders = loaders
        } else {
            listCache = nil
            loaders = nil
        }
        let reportCommitted: @Sendable ([(ListID, Revision?)], Int) -> Void = { [listCache] revisions, changeCount in
            listCache?.committed(revisions)
            upkeep.committed(changeCount)
        }
        committer = try PostgresCommitter(conninfo: conninfo, statementTimeout: settings.statementTimeout, store: store,
                                          view: view, node: node, waiters: waiters, rebasedAnswers: rebasedAnswers,
                                          uncommittedKeys: uncommittedKeys,
                                          onCommitted: reportCommitted)
        do {
            let catchUp = ListCatchUp(store: store, view: view) { [listCache] revisions in listCache?.committed(revisions) }
            follower = try PostgresFollower(conninfo: conninfo, node: node, catchUp: catchUp, replyLimit: settings.loadReplyLimit)
        } catch {
            loaders?.close()
            try? committer.close()
            throw error
        }
    }

    /// Publishes to `liveSync` the changes once they are committed (by this
    /// node's committer or, followed, by another node), in revision order,
    /// instead of when the store applies them; SUBSCRIBE and CHANGES_SINCE
    /// take the committed revisions. Before serving.
    public func attach(liveSync: any LiveSyncFeed) {
        view.attach(liveSync)
    }

    /// Queues one commit for the committer. Under the store's lock, in
    /// commit order; never blocks on the database.
    public func append(_ changes: [Change]) {
        let next = position.load(ordering: .relaxed) + 1
        position.store(next, ordering: .releasing)
        uncommittedKeys.record(changes, at: next)
        committer.enqueue(QueuedCommit(position: next, changes: changes))
    }

    /// Always: an answer to a change leaves only after its transaction committed.
    public var answersWaitForDurability: Bool { true }

    public var lastPosition: UInt64 { position.load(ordering: .acquiring) }

    public func commitState(of position: UInt64) -> CommitState { waiters.state(of: position) }

    public func notify(waiter: UInt64, at position: UInt64, wake: @escaping @Sendable () -> Void) {
        waiters.wait(waiter: waiter, for: position, wake: wake)
    }

    public func cancelNotification(waiter: UInt64) { waiters.cancel(waiter: waiter) }

    public func refusal(in positions: ClosedRange<UInt64>) -> ChecklistError? {
        waiters.refusal(in: positions)
    }

    public func rebasedAnswer(in positions: ClosedRange<UInt64>, list: ListID, revision: Revision) -> RebasedAnswer? {
        rebasedAnswers.take(in: positions, list: list, revision: revision)
    }

    public func rebasedAnswer(ofRetry retry: RetriedPatch, list: ListID, revision: Revision) -> RebasedAnswer? {
        rebasedAnswers.retried(retry, list: list, revision: revision)
    }

    public func uncommittedPosition(ofRetry retry: RetriedPatch) -> UInt64? {
        uncommittedKeys.position(of: retry)
    }

    public func committedAsRead(_ read: UncommittedRead) -> Bool {
        read.rewrites.allSatisfy { committer.store.rewrites(of: $0.key) == $0.value }
    }

    /// Logs `event=postgres_loaded` and starts the upkeep thread
    /// (`event=postgres_checkpoint`, `event=postgres_trimmed`); the committer
    /// logs `event=postgres_lost` and `event=postgres_reconnected` to `log`
    /// from now on.
    public func startUpkeep(log: ServerLog) {
        log.info("postgres_loaded", ["lists": load.lists, "items": load.items, "changesReplayed": load.changesReplayed,
                                     "schemaVersion": load.schemaVersion,
                                     "loadMs": Double(load.loadNanoseconds / 1000) / 1000,
                                     "cacheBytes": listCache.map { String($0.configuration.maxBytes) } ?? "all"])
        committer.setLog(log)
        do {
            try upkeep.start(log: log) { [weak self] in self?.lastPosition ?? 0 }
        } catch {
            log.error("postgres_upkeep_failed", ["error": "the upkeep thread did not start: \(error)"])
        }
        listCache?.setLog(log)
        loaders?.setLog(log)
        follower.setLog(log)
    }

    /// The commit counter and what is committed, as the log's figures:
    /// `lastLSN` the newest position, `durableLSN` the newest committed,
    /// `failed` while the database is unreachable.
    public var status: DurabilityStatus {
        DurabilityStatus(log: .init(lastLSN: lastPosition, durableLSN: waiters.durable, segments: 0,
                                    failed: !committer.isConnected))
    }

    /// Stops the upkeep, commits what is queued (waiting up to
    /// `PostgresCommitter.closeTimeout` for an unreachable database) and
    /// stops the committer.
    public func close() throws {
        follower.close()
        loaders?.close()
        upkeep.stop()
        try committer.close()
    }
}
