import ChecklistModel
import ChecklistPostgres
import ChecklistStore
import ChecklistThreads
import Synchronization

/// PostgreSQL as a server's storage (`ServerStorage`, docs/POSTGRES.md):
/// the stored lists are loaded into the store at start, and every commit
/// the store makes afterwards is queued for the committer thread
/// (`PostgresCommitter`), which commits everything queued as one
/// transaction (group commit) and then releases the answers of the whole
/// batch. Positions are a commit counter; durable means the transaction
/// committed. The event loops never touch the database.
///
/// When a transaction fails (the connection is lost, the backend killed,
/// a statement timeout), every position in it reads `.failed`: no answer
/// of that batch is sent (the connection is closed, the client retries
/// with its idempotency key). The committer keeps the batch and commits it
/// once the database is back, so the node's cache and the database never
/// part: a refused change may still be committed later, never one that
/// was acknowledged lost. While the database is unreachable every new
/// commit is refused the same way at once; reads of the cache go on.
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
    private let waiters: DurabilityWaiters
    private let committer: PostgresCommitter
    private let follower: PostgresFollower
    /// What is committed per list; live sync publishes only that.
    private let view: CommittedView
    /// The commit counter: the newest position given out by `append`.
    private let position = Atomic<UInt64>(0)

    /// Connects (at `conninfo`, a libpq connection string or URI), creates
    /// or migrates the schema, loads every stored list into `store` (which
    /// must be empty and must not commit meanwhile), handing each replayed
    /// change to `onReplayed`, and starts the committer thread.
    ///
    /// - Throws: `PostgresError` `CONNECTION_FAILED` when the database
    ///   cannot be reached, `SCHEMA_TOO_NEW`, or what the load met.
    public init(conninfo: String, store: Store, onReplayed: (Change) -> Void = { _ in }) throws {
        let started = monotonicNanoseconds()
        let database = try PostgresStore(connection: PostgresConnection(conninfo: conninfo))
        let migration = try database.migrate()
        var replayed = 0
        let sink = StoreRestoreSink(store: store, holdingNextListID: true)
        let reports = try database.loadAll(into: sink) { change in
            try store.replay(change)
            onReplayed(change)
            replayed += 1
        }
        sink.releaseNextListID()
        var committed: [ListID: Revision] = [:]
        store.exportLists(in: nil) { list, _ in committed[list.summary.id] = list.summary.revision }
        let totals = store.totals()
        load = LoadReport(lists: reports.count, items: UInt64(totals.items), changesReplayed: replayed,
                          schemaVersion: migration.version, loadNanoseconds: monotonicNanoseconds() - started,
                          everHeldLists: store.nextListID > ListID(1))
        let waiters = DurabilityWaiters()
        self.waiters = waiters
        let view = CommittedView(committed)
        self.view = view
        let node = UInt64.random(in: 1...UInt64.max)
        committer = try PostgresCommitter(conninfo: conninfo, store: store, view: view, node: node, waiters: waiters)
        do {
            follower = try PostgresFollower(conninfo: conninfo, node: node, catchUp: ListCatchUp(store: store, view: view))
        } catch {
            try? committer.close()
            throw error
        }
    }

    /// Publishes to `liveSync` the changes once they are committed (by this
    /// node's committer or, followed, by another node), in revision order,
    /// instead of when the store applies them; SUBSCRIBE and CHANGES_SINCE
    /// take the committed revisions. Before serving.
    public func attach(liveSync: SubscriptionHub) {
        view.attach(liveSync)
    }

    /// Queues one commit for the committer. Under the store's lock, in
    /// commit order; never blocks on the database.
    public func append(_ changes: [Change]) {
        let next = position.load(ordering: .relaxed) + 1
        position.store(next, ordering: .releasing)
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

    /// Logs `event=postgres_loaded`; the committer logs `event=postgres_lost`
    /// and `event=postgres_reconnected` to `log` from now on.
    public func startUpkeep(log: ServerLog) {
        log.info("postgres_loaded", ["lists": load.lists, "items": load.items, "changesReplayed": load.changesReplayed,
                                     "schemaVersion": load.schemaVersion,
                                     "loadMs": Double(load.loadNanoseconds / 1000) / 1000])
        committer.setLog(log)
        follower.setLog(log)
    }

    /// The commit counter and what is committed, as the log's figures:
    /// `lastLSN` the newest position, `durableLSN` the newest committed,
    /// `failed` while the database is unreachable.
    public var status: DurabilityStatus {
        DurabilityStatus(log: .init(lastLSN: lastPosition, durableLSN: waiters.durable, segments: 0,
                                    failed: !committer.isConnected))
    }

    /// Commits what is queued (waiting up to `PostgresCommitter.closeTimeout`
    /// for an unreachable database) and stops the committer.
    public func close() throws {
        follower.close()
        try committer.close()
    }
}
