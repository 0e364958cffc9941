import ChecklistModel
import ChecklistPostgres
import ChecklistStore
import ChecklistThreads
import Synchronization

/// The one database thread that commits (docs/POSTGRES.md, "Threads"): it
/// owns its `PostgresConnection`, takes everything queued as one batch,
/// commits it as one transaction, and marks the batch's positions durable
/// (or failed). While a transaction is in flight the next batch gathers.
///
/// Connection loss: the batch's positions fail, the connection is dropped,
/// `event=postgres_lost` is logged, the store refuses changes with
/// `UNAVAILABLE` and the committer reconnects with backoff (50 ms doubling
/// to 2 s), failing every commit appended before the refusal took hold;
/// once connected it logs `event=postgres_reconnected`, lets the store
/// take changes again and commits the kept batch and the queue after it.
final class PostgresCommitter: Sendable {
    /// How long `close` keeps trying to commit the queue when the database
    /// is unreachable.
    static let closeTimeout: Duration = .seconds(5)

    private struct Queue {
        var commits: [QueuedCommit] = []
        /// The newest position enqueued.
        var lastEnqueued: UInt64 = 0
        var closing = false
    }

    /// Locking rule: the store's lock may be held when `queue`'s is taken
    /// (`enqueue` runs under it, and the committer takes the batch inside
    /// `Store.withExportedLists`), never the other way round.
    private let queue = ConditionLock(Queue())
    private let store: Store
    private let waiters: DurabilityWaiters
    private let log = Mutex<ServerLog?>(nil)
    private let connected = Atomic<Bool>(true)
    private let thread = Mutex<NativeThread?>(nil)
    /// Told, after each transaction, the revisions the database holds for
    /// the lists it touched (the list cache) and its number of changes (the upkeep).
    fileprivate let onCommitted: @Sendable (_ revisions: [(ListID, Revision?)], _ changeCount: Int) -> Void

    /// - Parameter statementTimeout: the connection's `statement_timeout`:
    ///   a stuck statement fails the batch (kept and tried again).
    init(conninfo: String, statementTimeout: Duration?, store: Store, committed: [ListID: Revision], waiters: DurabilityWaiters,
         onCommitted: @escaping @Sendable (_ revisions: [(ListID, Revision?)], _ changeCount: Int) -> Void) throws {
        self.store = store
        self.waiters = waiters
        self.onCommitted = onCommitted
        let started = try NativeThread.start(name: "pg-committer") { [self] in
            var loop = CommitLoop(conninfo: conninfo, statementTimeout: statementTimeout, committed: committed)
            loop.run(self)
        }
        thread.withLock { $0 = started }
    }

    var isConnected: Bool { connected.load(ordering: .acquiring) }

    func setLog(_ serverLog: ServerLog) { log.withLock { $0 = serverLog } }

    func enqueue(_ commit: QueuedCommit) {
        queue.withLock { state in
            state.commits.append(commit)
            state.lastEnqueued = commit.position
        }
        queue.signal(.work)
    }

    func close() throws {
        queue.withLock { $0.closing = true }
        queue.signal(.work)
        thread.withLock { $0.take() }?.join()
    }

    // MARK: On the committer thread

    /// Waits for commits (or closing, or `deadline`); nil when closing with
    /// nothing queued.
    fileprivate func waitForWork() -> Bool {
        queue.withLock(waitingOn: .work, until: { !$0.commits.isEmpty || $0.closing }) { state, _ in
            !state.commits.isEmpty
        }
    }

    /// Sleeps until `nanoseconds` pass, or until `close` is called unless
    /// it already was.
    fileprivate func pause(_ nanoseconds: UInt64) {
        let closingAlready = isClosing
        queue.withLock(waitingOn: .work, until: { !closingAlready && $0.closing },
                       deadline: monotonicNanoseconds() &+ nanoseconds) { _, _ in }
    }

    fileprivate var isClosing: Bool { queue.withLock { $0.closing } }

    /// The newest position enqueued.
    fileprivate var lastEnqueued: UInt64 { queue.withLock { $0.lastEnqueued } }

    /// Takes everything queued, with the rows it leaves, in one instant of the store.
    fileprivate func takeBatch(committed: [ListID: Revision]) -> PostgresBatch? {
        store.withExportedLists { exported -> PostgresBatch? in
            let taken = queue.withLock { state -> [QueuedCommit] in
                defer { state.commits.removeAll(keepingCapacity: true) }
                return state.commits
            }
            guard !taken.isEmpty else { return nil }
            var after: [ListID: ExportedList] = [:]
            for (ns, id) in PostgresBatch.touched(taken) { after[id] = exported(ns, id) }
            return PostgresBatch(taken, after: after, committed: committed)
        }
    }

    /// What a change gets while the database is unreachable.
    static let unavailable = ChecklistError(.unavailable, "the database is unreachable; nothing was applied; try again later")

    /// Records whether the committer has a connection; true when that
    /// changed. Without one, the store refuses changes (`UNAVAILABLE`).
    fileprivate func setConnected(_ value: Bool) -> Bool {
        guard connected.exchange(value, ordering: .acquiringAndReleasing) != value else { return false }
        store.refuseChanges(value ? nil : Self.unavailable)
        return true
    }

    /// Runs `body` with the server's log, once `startUpkeep` gave it.
    fileprivate func withLog(_ body: (ServerLog) -> Void) {
        if let current = log.withLock({ $0 }) { body(current) }
    }

    fileprivate var durability: DurabilityWaiters { waiters }
}

/// The committer thread's own state: its connection, the revisions the
/// database holds, the batch in hand.
private struct CommitLoop {
    let conninfo: String
    let statementTimeout: Duration?
    var committed: [ListID: Revision]
    var database: PostgresStore?
    /// The highest position already reported failed.
    var failedThrough: UInt64 = 0
    var backoff: UInt64 = 50_000_000

    init(conninfo: String, statementTimeout: Duration?, committed: [ListID: Revision]) {
        self.conninfo = conninfo
        self.statementTimeout = statementTimeout
        self.committed = committed
    }

    mutating func run(_ committer: PostgresCommitter) {
        while committer.waitForWork() {
            guard let batch = committer.takeBatch(committed: committed) else { continue }
            var giveUpAt: UInt64?
            while !commit(batch, committer) {
                // Refuse, at once, what is appended while the database is away.
                fail(through: committer.lastEnqueued, committer)
                if committer.isClosing {
                    let now = monotonicNanoseconds()
                    giveUpAt = giveUpAt ?? now + UInt64(PostgresCommitter.closeTimeout.components.seconds) * 1_000_000_000
                    if now >= giveUpAt! {
                        let positions = "\(batch.positions.lowerBound)...\(committer.lastEnqueued)"
                        committer.withLog { $0.error("postgres_unflushed", ["positions": positions]) }
                        return
                    }
                }
                committer.pause(backoff)
                backoff = min(backoff * 2, 2_000_000_000)
            }
            backoff = 50_000_000
        }
    }

    /// One attempt at `batch`; true once it committed (or can never commit).
    private mutating func commit(_ batch: PostgresBatch, _ committer: PostgresCommitter) -> Bool {
        do {
            if database == nil {
                let connection = try PostgresConnection(conninfo: conninfo)
                try connection.setStatementTimeout(statementTimeout)
                database = PostgresStore(connection: connection)
                if committer.setConnected(true) {
                    let backoffMs = backoff / 1_000_000
                    committer.withLog { $0.info("postgres_reconnected", ["backoffMs": backoffMs]) }
                }
            }
            try database!.commit(batch.commits)
            let after = batch.revisionsAfter
            for (list, revision) in after { committed[list] = revision }
            committer.onCommitted(after, batch.changeCount)
            // Positions failed on an earlier try are committed now too.
            committer.durability.durableIncludingFailed(batch.positions.upperBound)
            return true
        } catch let error as PostgresError where error.code == .staleRevision {
            fail(through: batch.positions.upperBound, committer)
            settleStale(batch, error, committer)
            return true
        } catch {
            fail(through: batch.positions.upperBound, committer)
            if database?.connection.isUsable != true || (error as? PostgresError)?.code == .connectionLost {
                database = nil
                if committer.setConnected(false) {
                    committer.withLog { $0.error("postgres_lost", ["error": "\(error)", "positions": "\(batch.positions)"]) }
                }
            } else {
                committer.withLog { $0.error("postgres_commit_failed", ["error": "\(error)", "positions": "\(batch.positions)"]) }
            }
            return false
        }
    }

    /// The database is not at the batch's base revisions. Either an
    /// earlier attempt did commit and only its answer was lost (the rows
    /// are at the batch's revisions: nothing to do), or another writer
    /// moved the lists: the batch is dropped and `event=postgres_conflict`
    /// logged. Either way the revisions are taken from the database.
    private mutating func settleStale(_ batch: PostgresBatch, _ error: PostgresError, _ committer: PostgresCommitter) {
        var matches = true
        for (list, revision) in batch.revisionsAfter {
            let stored = (try? database?.list(list))??.summary.revision
            matches = matches && stored == revision
            committed[list] = stored
            committer.onCommitted([(list, stored)], 0)
        }
        if matches {
            committer.durability.durable(batch.positions.upperBound)
        } else {
            committer.withLog { $0.error("postgres_conflict", ["error": "\(error)", "positions": "\(batch.positions)"]) }
        }
    }

    /// Reports every position up to `position` that is neither durable nor
    /// reported yet as failed.
    private mutating func fail(through position: UInt64, _ committer: PostgresCommitter) {
        let from = max(failedThrough, committer.durability.durable) + 1
        guard position >= from else { return }
        committer.durability.failed(from...position)
        failedThrough = position
    }
}
