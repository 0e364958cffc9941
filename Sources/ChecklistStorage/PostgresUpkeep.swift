import ChecklistLog
import ChecklistModel
import ChecklistPostgres
import ChecklistSnapshot
import ChecklistStore
import ChecklistThreads
import Synchronization

/// The background upkeep of `PostgresStorage` (docs/POSTGRES.md, "Upkeep"):
/// one thread with its own connection, never an event loop. Woken once the
/// committer has committed `checkpointAfter` changes since its last pass (or
/// after `housekeepingInterval`), it
///
/// 1. writes a new checkpoint for each list with at least `checkpointAfter`
///    changes after its stored one, from a copy-on-write cut of the cached
///    list taken together with the storage's newest position, once that
///    position is committed (so a checkpoint never holds a change that is
///    not committed), each list once claimed (`claimCheckpoint`: the other
///    nodes' upkeeps skip it meanwhile, and after it is stored it is not due);
/// 2. then, at most every `housekeepingInterval`, trims the changes both
///    inside a checkpoint and older than the feed's retention, drops old
///    deletion markers and bounds the idempotency answers.
final class PostgresUpkeep: Sendable {
    private struct State {
        var committedChanges = 0
        var stopping = false
    }

    /// The waiter id the upkeep uses with `CommitStates` (connection ids count up from 1).
    private static let waiterID = UInt64.max

    private let state = ConditionLock(State())
    private let conninfo: String
    private let settings: PostgresSettings
    private let store: Store
    private let waiters: CommitStates
    /// The revision the node knows committed of a list (`CommittedView`).
    private let committedRevision: @Sendable (ListID) -> Revision?
    private let thread = Mutex<NativeThread?>(nil)

    init(conninfo: String, settings: PostgresSettings, store: Store, waiters: CommitStates,
         committedRevision: @escaping @Sendable (ListID) -> Revision? = { _ in nil }) {
        self.committedRevision = committedRevision
        self.conninfo = conninfo
        self.settings = settings
        self.store = store
        self.waiters = waiters
    }

    /// Starts the thread; its events go to `log`. `lastPosition` reads the
    /// storage's newest commit position (under the store's lock, where
    /// `append` moves it).
    func start(log: ServerLog, lastPosition: @escaping @Sendable () -> UInt64) throws {
        let started = try NativeThread.start(name: "pg-upkeep") { [self] in run(log, lastPosition) }
        thread.withLock { $0 = started }
    }

    /// The committer committed `changes` changes (any thread).
    func committed(_ changes: Int) {
        let due = state.withLock { s -> Bool in
            s.committedChanges += changes
            return s.committedChanges >= settings.checkpointAfter
        }
        if due { state.signal(.work) }
    }

    /// Stops the thread after the pass in progress.
    func stop() {
        state.withLock { $0.stopping = true }
        state.signal(.work)
        thread.withLock { $0.take() }?.join()
    }

    // MARK: On the upkeep thread

    private func run(_ log: ServerLog, _ lastPosition: () -> UInt64) {
        var database: PostgresStore?
        var housekeptAt: UInt64?
        let interval = Self.nanoseconds(settings.housekeepingInterval)
        while true {
            let stopping = state.withLock(waitingOn: .work, until: { $0.stopping || $0.committedChanges >= settings.checkpointAfter },
                                          deadline: monotonicNanoseconds() &+ interval) { s, _ -> Bool in
                s.committedChanges = 0
                return s.stopping
            }
            if stopping { return }
            do {
                if database == nil {
                    let connection = try PostgresConnection(conninfo: conninfo)
                    try connection.setStatementTimeout(settings.statementTimeout)
                    database = PostgresStore(connection: connection)
                }
                try checkpoint(database!, log, lastPosition)
                if housekeptAt.map({ monotonicNanoseconds() - $0 >= interval }) ?? true {
                    try housekeep(database!, log)
                    housekeptAt = monotonicNanoseconds()
                }
            } catch {
                log.warn("postgres_upkeep_failed", ["error": "\(error)"])
                if database?.connection.isUsable != true { database = nil }
            }
        }
    }

    /// Writes the checkpoints due, most changes first, 16 lists a round, in
    /// rounds while a full round wrote some (an import of many lists is
    /// checkpointed in one pass, not one round a minute), at most 64 rounds.
    private func checkpoint(_ database: PostgresStore, _ log: ServerLog, _ lastPosition: () -> UInt64) throws {
        for _ in 0..<64 {
            let (named, written) = try checkpointRound(database, log, lastPosition)
            if named < Self.listsPerRound || written == 0 { return }
        }
    }

    private static let listsPerRound = 16

    /// One round of `checkpoint`: how many lists were named, how many written.
    private func checkpointRound(_ database: PostgresStore, _ log: ServerLog,
                                 _ lastPosition: () -> UInt64) throws -> (named: Int, written: Int) {
        let named = try database.compactionCandidates(changes: settings.checkpointAfter, bytes: settings.checkpointAfterBytes,
                                                      limit: Self.listsPerRound)
        var written = 0
        for id in named {
            if state.withLock({ $0.stopping }) { return (0, 0) }
            // Another node's upkeep may be building it, or have stored it since.
            guard try database.claimCheckpoint(of: id, changes: settings.checkpointAfter, bytes: settings.checkpointAfterBytes) else {
                continue
            }
            defer { try? database.releaseCheckpoint(of: id) }
            let started = monotonicNanoseconds()
            // The cut, the newest position and the committed revision in one
            // instant of the store: the cut holds exactly the commits up to
            // `position`. Its list taken back to the committed revision is
            // what the database holds; otherwise wait for the commits in
            // flight (a patch of them may still be rebased onto another
            // node's commit: then the cut is not what was committed).
            let (whole, (position, committed)) = store.cut { (lastPosition(), committedRevision(id)) }
            var cached = whole
            if let committed, let rolled = whole.rolledBack(id, to: committed) {
                cached = rolled
            } else {
                // Committed as the cut holds them only if nothing rewrote
                // them meanwhile (a rebase, a drop and reload): else the
                // cut is not what the database holds at its revision, and
                // the list waits for a later pass.
                guard waitUntilCommitted(position), store.rewrites(of: id) == whole.rewrites(of: id) else { continue }
            }
            // A list the cache holds summary-only (or not at all) is read from
            // the database into a store of its own: what is stored is committed.
            let cut = cached.holdsRows(of: id) ? cached : try Self.loadAlone(id, database, limits: store.limits)
            var builder: ListCheckpointBuilder?
            var failure: (any Error)?
            _ = try cut.exportList(id) { list, forEachRow in
                let s = list.summary
                let made = try ListCheckpointBuilder(list: SnapshotList(
                    namespace: list.namespace, id: s.id, name: s.name, icon: s.icon, revision: s.revision,
                    nextItemID: list.nextItemID, itemCount: s.itemCount))
                forEachRow { row in
                    guard failure == nil else { return }
                    do { try made.append(row.item) } catch { failure = error }
                }
                builder = made
            }
            if let failure { throw failure }
            guard let builder else { continue }
            if try database.storeCheckpoint(builder) {
                written += 1
                log.info("postgres_checkpoint", ["list": id.rawValue, "revision": builder.list.revision,
                                                 "items": builder.list.itemCount,
                                                 "ms": Double((monotonicNanoseconds() - started) / 1000) / 1000])
            }
        }
        return (named.count, written)
    }

    /// A cut of a store holding only `id`, loaded from the database.
    private static func loadAlone(_ id: ListID, _ database: PostgresStore, limits: Limits) throws -> StoreCut {
        let alone = Store(limits: limits)
        _ = try database.loadList(id, into: StoreRestoreSink(store: alone)) { change in try alone.replay(change) }
        return alone.cut { () }.0
    }

    /// Trims the feed, forgets old deletions and bounds the answers.
    private func housekeep(_ database: PostgresStore, _ log: ServerLog) throws {
        let trimmed = try database.trimChanges(retainPerList: settings.retainChangesPerList)
        let deletions = try database.forgetDeletions(olderThan: Int(settings.keepDeletions.components.seconds))
        let answers = try database.forgetAnswers(keepPerClient: settings.answersPerClient)
        if trimmed + deletions + answers > 0 {
            log.info("postgres_trimmed", ["changes": trimmed, "deletions": deletions, "answers": answers])
        }
    }

    /// Waits (up to 30 s) until every commit up to `position` is committed;
    /// false when it is not by then, or one of them failed for good.
    private func waitUntilCommitted(_ position: UInt64) -> Bool {
        guard waiters.durable < position else { return true }
        let latch = Latch(count: 1)
        waiters.wait(waiter: Self.waiterID, for: position) { latch.countDown() }
        _ = latch.wait(until: .now.advanced(by: .seconds(30)))
        waiters.cancel(waiter: Self.waiterID)
        return waiters.durable >= position
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) &* 1_000_000_000 &+ UInt64(max(0, attoseconds) / 1_000_000_000)
    }
}
