import ChecklistLog
import ChecklistModel
import ChecklistPostgres
import ChecklistStore
import ChecklistThreads
import Synchronization

/// The one database thread that commits (docs/POSTGRES.md, "Threads"): it
/// owns its `PostgresConnection`, takes everything queued as one batch,
/// commits it as one transaction (locking its lists and rebasing it onto
/// other nodes' commits, or in one flight while no other node wrote them
/// lately), and marks the batch's positions durable (or failed). While a
/// transaction is in flight the next batch gathers.
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
    let store: Store
    private let waiters: CommitStates
    /// The answers of rebased patches, for the connections holding them.
    let rebasedAnswers: RebasedPatchAnswers
    /// The keys of patches not committed yet, settled as batches commit.
    let uncommittedKeys: UncommittedKeys
    /// List ids reserved per block (`Store.addListIDs`); a new block is
    /// reserved after a batch that left fewer than half of one.
    static let listIDBlock = 100
    private let log = Mutex<ServerLog?>(nil)
    private let connected = Atomic<Bool>(true)
    private let thread = Mutex<NativeThread?>(nil)
    /// What is committed per list, and live sync behind it.
    let view: CommittedView
    /// This node's id in the commit notifications (its own are skipped).
    let node: UInt64
    /// Told, after each transaction, the revisions the database holds for
    /// the lists it touched (the list cache) and its number of changes (the upkeep).
    let onCommitted: @Sendable (_ revisions: [(ListID, Revision?)], _ changeCount: Int) -> Void

    /// - Parameter statementTimeout: the connection's `statement_timeout`:
    ///   a stuck statement fails the batch (kept and tried again).
    init(conninfo: String, statementTimeout: Duration?, store: Store, view: CommittedView, node: UInt64,
         waiters: CommitStates, rebasedAnswers: RebasedPatchAnswers, uncommittedKeys: UncommittedKeys, onCommitted: @escaping @Sendable (_ revisions: [(ListID, Revision?)], _ changeCount: Int) -> Void) throws {
        self.store = store
        self.waiters = waiters
        self.rebasedAnswers = rebasedAnswers
        self.uncommittedKeys = uncommittedKeys
        self.view = view
        self.node = node
        self.onCommitted = onCommitted
        let started = try NativeThread.start(name: "pg-committer") { [self] in
            var loop = CommitLoop(conninfo: conninfo, statementTimeout: statementTimeout)
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
    fileprivate func takeBatch() -> PostgresBatch? {
        store.withExportedListsAndRowBytes { exported -> PostgresBatch? in
            let taken = queue.withLock { state -> [QueuedCommit] in
                defer { state.commits.removeAll(keepingCapacity: true) }
                return state.commits
            }
            guard !taken.isEmpty else { return nil }
            var after: [ListID: ExportedList] = [:]
            var rowBytes: [ListID: Int] = [:]
            for (ns, id) in PostgresBatch.touched(taken) {
                guard let found = exported(ns, id) else { continue }
                after[id] = found.list
                rowBytes[id] = found.rowBytes
            }
            return PostgresBatch(taken, after: after, rowBytes: rowBytes, committed: view.all)
        }
    }

    /// Takes out of the queue every commit that touches one of `lists`
    /// (under the store's lock: they were applied on top of a lost commit).
    fileprivate func dropQueued(touching lists: Set<ListID>) -> [QueuedCommit] {
        queue.withLock { state in
            var dropped: [QueuedCommit] = []
            state.commits.removeAll { commit in
                guard commit.changes.contains(where: { lists.contains($0.list) }) else { return false }
                dropped.append(commit)
                return true
            }
            return dropped
        }
    }

    /// Replaces, in the queue, the changes of `list`'s patches that a
    /// rebase applied again (`outcomes`, by the revision they had); returns
    /// each one (`RebasedCommit`). Under the store's lock.
    func rewriteQueued(_ list: ListID, _ outcomes: [Revision: RebasedPatch]) -> [RebasedCommit] {
        queue.withLock { state in QueuedCommit.rebase(&state.commits, list: list, to: outcomes) }
    }

    fileprivate var storeForCatchUp: ListCatchUp { ListCatchUp(store: store, view: view) }

    /// Publishes `foreign`, other nodes' changes a rebase applied (in
    /// commit order per list), and tells the list cache; empties it.
    fileprivate func publish(_ foreign: inout [Change]) {
        guard !foreign.isEmpty else { return }
        store.withExportedLists { _ in view.advance(foreign) }
        var lists = Set<ListID>()
        for change in foreign { lists.insert(change.list) }
        onCommitted(lists.map { ($0, view.revision(of: $0)) }, 0)
        foreign = []
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
    func withLog(_ body: (ServerLog) -> Void) {
        if let current = log.withLock({ $0 }) { body(current) }
    }

    fileprivate var durability: CommitStates { waiters }
}

/// The committer thread's own state: its connection and the batch in hand.
private struct CommitLoop {
    let conninfo: String
    let statementTimeout: Duration?
    var database: PostgresStore?
    /// The highest position already reported failed.
    var failedThrough: UInt64 = 0
    var backoff: UInt64 = 50_000_000
    /// Locked batches in a row that met no other node's commit. While
    /// there were `calmBeforeOptimism` (as at start), a batch goes first as
    /// one flight without row locks (`PostgresStore.commit(_:)`, which
    /// checks every base as it writes); one that meets another node's
    /// commit goes again through the lock and the rebase, and the count
    /// starts over. A node writing lists no other node writes saves the
    /// lock's round trip and statements on every batch; nodes sharing lists
    /// seldom try (a failed try costs a flight).
    var calm = CommitLoop.calmBeforeOptimism
    static let calmBeforeOptimism = 16

    init(conninfo: String, statementTimeout: Duration?) {
        self.conninfo = conninfo
        self.statementTimeout = statementTimeout
    }

    mutating func run(_ committer: PostgresCommitter) {
        while true {
            reconnectWhileRefusing(committer)
            guard committer.waitForWork() else { return }
            guard var batch = committer.takeBatch() else { continue }
            var giveUpAt: UInt64?
            while !commit(&batch, committer) {
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
            FreeMemory.giveBackIfDue()  // after a bulk fill's batches, not per commit
        }
    }

    /// A connection lost with no batch in hand (its commit notice failed)
    /// leaves the store refusing changes, so nothing new is queued that
    /// would make `commit` connect again: connect here, with the backoff a
    /// failed batch waits (50 ms doubling to 2 s, before each try), until it
    /// works or the committer closes. The commits queued before the refusal
    /// took hold were failed by `lose`; they stay queued and are committed
    /// once connected.
    private mutating func reconnectWhileRefusing(_ committer: PostgresCommitter) {
        guard !committer.isConnected else { return }
        while !committer.isConnected && !committer.isClosing {
            committer.pause(backoff)
            backoff = min(backoff * 2, 2_000_000_000)
            do { try connect(committer) } catch { database = nil }
        }
        backoff = 50_000_000
    }

    /// The connection is lost: it is dropped, the store refuses changes
    /// from now on (`event=postgres_lost`), and every commit queued before
    /// that took hold fails at once (`UNAVAILABLE`, outcome unknown: it stays
    /// queued and is committed once connected). Failing only the batch in
    /// hand would leave those queued behind it unanswered until the
    /// database is back.
    private mutating func lose(_ error: any Error, positions: ClosedRange<UInt64>, _ committer: PostgresCommitter) {
        database = nil
        if committer.setConnected(false) {
            committer.withLog { $0.error("postgres_lost", ["error": "\(error)", "positions": "\(positions)"]) }
        }
        fail(through: committer.lastEnqueued, committer)
    }

    /// Opens the committer's connection; once the store refused changes,
    /// lets it take them again and logs `event=postgres_reconnected`.
    private mutating func connect(_ committer: PostgresCommitter) throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        try connection.setStatementTimeout(statementTimeout)
        database = PostgresStore(connection: connection)
        if committer.setConnected(true) {
            let backoffMs = backoff / 1_000_000
            committer.withLog { $0.info("postgres_reconnected", ["backoffMs": backoffMs]) }
        }
    }

    /// One attempt at `batch`; true once it committed (or can never commit).
    /// When commits of it are dropped (`drop`), `batch` becomes the rest.
    private mutating func commit(_ batch: inout PostgresBatch, _ committer: PostgresCommitter) -> Bool {
        do {
            if database == nil { try connect(committer) }
            let unfit = batch.unfit
            guard unfit.isEmpty else { return try drop(unfit, from: &batch, committer) }
            let database = database!
            // With quotas, always through the lock and the rebase: the quota
            // check then counts rows already at the batch's bases.
            let quotas = committer.store.quotas
            if calm >= Self.calmBeforeOptimism && !batch.retried && !quotas.isBounded {
                do {
                    let bodies = try database.commit(batch.commits)
                    committed(batch, bodies: bodies, committer)
                    return true
                } catch let error as PostgresError where error.code == .staleRevision {
                    calm = 0  // nothing was written: lock, rebase, commit
                }
            }
            let rebase = CrossNodeRebase(committer: committer, database: database, answers: committer.rebasedAnswers)
            var attempt = batch
            var sawStale = false
            defer { calm = sawStale ? 0 : min(calm + 1, Self.calmBeforeOptimism) }
            var bodies: StoredBodies = [:]
            // Other nodes' changes the rebase applied: published while the
            // writes are in flight (or once the commit failed), before the batch's.
            var foreign: [Change] = []
            do {
                defer { committer.publish(&foreign) }
                bodies = try database.commit(locking: CrossNodeRebase.lockable(attempt), quotas: quotas, prepare: { locked in
                    let stale = CrossNodeRebase.stale(attempt, locked: locked.revisions)
                    guard !stale.isEmpty else { return attempt.commits }
                    sawStale = true
                    // An earlier attempt whose COMMIT answer was lost: nothing to rebase.
                    if attempt.retried, try isStored(attempt, in: database) { throw AlreadyStored() }
                    try rebase.rebase(&attempt, stale: stale, locked: locked.revisions, stored: locked.changesAfterBases,
                                      unpublished: &foreign)
                    return attempt.commits
                }, whileWriting: { committer.publish(&foreign) })
            } catch is AlreadyStored {
                // Stored by the earlier attempt: committed below.
            } catch {
                batch = attempt
                throw error
            }
            batch = attempt
            committed(batch, bodies: bodies, committer)
            return true
        } catch let error as PostgresError where error.code == .staleRevision || error.sqlState == "23505" {
            return settleStale(&batch, error, committer)
        } catch let error as PostgresError where error.code == .quotaExceeded && error.quota != nil {
            return settleQuota(&batch, error, committer)
        } catch {
            fail(through: batch.positions.upperBound, committer)
            batch.retried = true
            if database?.connection.isUsable != true || (error as? PostgresError)?.code == .connectionLost {
                lose(error, positions: batch.positions, committer)
            } else {
                committer.withLog { $0.error("postgres_commit_failed", ["error": "\(error)", "positions": "\(batch.positions)"]) }
            }
            return false
        }
    }

    /// The batch committed: its changes are published (in the store's
    /// lock, with the committed revisions), its answers released, and the
    /// other nodes told, in a transaction of its own that writes nothing,
    /// with the changes as the commit stored them (`bodies`) when they fit
    /// (`CommitNotice`: the followers then need no read of the database; a
    /// batch found stored by an earlier attempt has none to hand on).
    /// (Sent in the commit's flight right after COMMIT instead, the notice
    /// woke the other nodes' followers before this node's answers left:
    /// on two shared cores that cost more than the round trip it saved,
    /// docs/POSTGRES.md, "Several nodes".)
    private mutating func committed(_ batch: PostgresBatch, bodies: StoredBodies = [:], _ committer: PostgresCommitter) {
        committer.store.withExportedLists { _ in committer.view.advance(batch.queued.flatMap(\.changes)) }
        let revisions = batch.revisionsAfter
        committer.store.settlePending(revisions)
        committer.onCommitted(revisions, batch.changeCount)
        // Positions failed on an earlier try are committed now too.
        committer.durability.durableIncludingFailed(batch.positions.upperBound)
        committer.uncommittedKeys.settle(through: batch.positions.upperBound)
        do {
            for payload in CommitNotice.payloads(node: committer.node, revisions, bodies: bodies) {
                try database?.connection.notifyCommits(payload)
            }
        } catch {
            // The others find the commit at their next reconciliation.
            if database?.connection.isUsable != true { lose(error, positions: batch.positions, committer) }
        }
        reserveListIDs(committer)
    }

    /// Reserves a new block of list ids when fewer than half a block are
    /// left (a failure is tried again after the next batch).
    private func reserveListIDs(_ committer: PostgresCommitter) {
        guard let database, let left = committer.store.listIDsLeft, left < PostgresCommitter.listIDBlock / 2,
              let first = try? database.reserveListIDs(PostgresCommitter.listIDBlock) else { return }
        committer.store.addListIDs(first.rawValue..<first.rawValue + UInt64(PostgresCommitter.listIDBlock))
    }

    /// The database is not at the batch's base revisions (or a keyed
    /// patch's answer is stored already). Either an earlier attempt did
    /// commit and only its answer was lost (the rows are at the batch's
    /// revisions), or another node committed to those lists first: their
    /// commits are dropped, the lists reloaded, and the rest committed.
    private mutating func settleStale(_ batch: inout PostgresBatch, _ error: PostgresError, _ committer: PostgresCommitter) -> Bool {
        if batch.retried, (try? isStored(batch, in: database!)) == true {
            committed(batch, committer)
            return true
        }
        let lists = error.code == .staleRevision ? Set(error.lists)
            : Set(batch.commits.filter { $0.answer != nil }.map(\.list))
        committer.withLog { $0.info("postgres_conflict", ["lists": lists.map(\.rawValue).sorted().map(String.init).joined(separator: ","),
                                                         "positions": "\(batch.positions)"]) }
        do {
            return try drop(lists.isEmpty ? Set(batch.commits.map(\.list)) : lists, from: &batch, committer)
        } catch {
            fail(through: batch.positions.upperBound, committer)
            if database?.connection.isUsable != true { database = nil }
            return false
        }
    }

    /// The database's counts leave a namespace past a quota (another node
    /// filled it meanwhile): the batch's commits of that namespace that may
    /// grow it are refused with `QUOTA_EXCEEDED` (their answers say so),
    /// their lists reloaded from the database (nothing of them stays
    /// applied), and the rest of the batch committed.
    private mutating func settleQuota(_ batch: inout PostgresBatch, _ error: PostgresError, _ committer: PostgresCommitter) -> Bool {
        guard let (namespace, refusal) = error.quota else { return false }
        let inNamespace = batch.queued.filter { $0.changes.contains { $0.namespace == namespace } }
        let growing = inNamespace.filter(PostgresBatch.mayGrow)
        let refused = growing.isEmpty ? inNamespace : growing
        for commit in refused { committer.durability.refuse(commit.position, refusal) }
        let lists = Set(refused.flatMap { $0.changes.map(\.list) })
        committer.withLog { $0.info("quota_exceeded", ["namespace": namespace.rawValue, "field": refusal.field ?? "",
                                                      "commits": refused.count, "positions": "\(batch.positions)"]) }
        do {
            return try drop(lists, from: &batch, committer)
        } catch {
            fail(through: batch.positions.upperBound, committer)
            if database?.connection.isUsable != true { database = nil }
            return false
        }
    }

    /// Whether every commit of `batch` is in the database as it is: an
    /// earlier attempt committed and only its answer was lost. (The same
    /// revisions alone prove nothing: another node may have reached them.)
    private func isStored(_ batch: PostgresBatch, in database: PostgresStore) throws -> Bool {
        for commit in batch.commits {
            guard let last = commit.changes.last else { continue }
            let stored = try database.changes(of: commit.list, after: last.revision - 1, limit: 1)
            guard stored == [last] else { return false }
        }
        return true
    }

    /// Fails every commit of `batch` and of the queue that touches `lists`
    /// (their connections close unanswered: the clients retry), reloads the
    /// lists from the database, corrects the idempotency memory for the
    /// dropped keys, and commits the rest of the batch.
    private mutating func drop(_ lists: Set<ListID>, from batch: inout PostgresBatch, _ committer: PostgresCommitter) throws -> Bool {
        var affected = lists
        for commit in batch.queued where commit.changes.contains(where: { lists.contains($0.list) }) {
            for change in commit.changes { affected.insert(change.list) }
        }
        var dropped = batch.queued.filter { $0.changes.contains { affected.contains($0.list) } }
        let kept = batch.queued.filter { !$0.changes.contains { affected.contains($0.list) } }
        // Failed once their lists are reloaded: a client told so reads
        // the lists without them (a refused commit's answer says it was
        // not applied). Should a reload fail, the caller fails the batch.
        let fromBatch = dropped
        let catchUp = committer.storeForCatchUp
        for list in affected.sorted(by: { $0.rawValue < $1.rawValue }) {
            try catchUp.reload(list, database: database!, force: true) {
                let purged = committer.dropQueued(touching: affected)
                for commit in purged { committer.durability.failed(commit.position...commit.position) }
                dropped += purged
            }
        }
        for commit in fromBatch { committer.durability.failed(commit.position...commit.position) }
        committer.onCommitted(affected.map { ($0, committer.view.revision(of: $0)) }, 0)
        for commit in dropped { committer.uncommittedKeys.forget(commit.changes) }
        for commit in dropped {
            for change in commit.changes {
                guard let key = change.idempotencyKey else { continue }
                switch try database!.lookUp(namespace: change.namespace, client: key.client, sequence: key.sequence) {
                case .answered(let answer):
                    committer.store.restoreIdempotency(IdempotencyMemory(clients: [
                        IdempotencyMemory.Client(namespace: change.namespace, client: key.client, floor: 0, answers: [answer])]))
                case .unknown, .forgotten:
                    committer.store.withdrawAnswer(of: key, in: change.namespace)
                }
            }
        }
        guard !kept.isEmpty else { return true }
        batch = PostgresBatch(kept, after: batch.after, rowBytes: batch.rowBytes, committed: committer.view.all)
        return commit(&batch, committer)
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

/// A retried batch turned out stored by its earlier attempt.
private struct AlreadyStored: Error {}
