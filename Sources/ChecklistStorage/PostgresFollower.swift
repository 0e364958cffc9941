import ChecklistLog
import Glibc
import ChecklistModel
import ChecklistPostgres
import ChecklistStore
import ChecklistThreads
import Synchronization

/// The database thread that follows the other nodes' commits
/// (docs/POSTGRES.md, "Several nodes"). It owns its own connection, which
/// `LISTEN`s on the commit channel: it waits on the connection's socket
/// (`poll`), reads the notifications, and for every list another node
/// committed to past what this node knows, brings the cached list up to
/// the database (`ListCatchUp.follow`: the stored changes after the node's
/// committed revision, replayed in order and published). Every
/// `reconcileInterval` it also compares every list's stored revision with
/// what it knows: the safety net for a notification never sent (a node
/// died between its commit and its notify) or missed (while this listener
/// reconnected).
final class PostgresFollower: Sendable {
    /// How often every list's revision is compared with the database.
    static let reconcileInterval: UInt64 = 2_000_000_000
    /// How often the follower looks whether a list deferred (the node's own
    /// commit of it in flight) can be followed: only once the committed view
    /// moved (`CommittedView.generation`), or `deferredRetry` passed.
    static let retryMilliseconds: Int32 = 2
    /// The longest a deferred list waits for the view to move before it is
    /// asked again anyway.
    static let deferredRetry: UInt64 = 50_000_000

    private let stopping = Atomic<Bool>(false)
    private let thread = Mutex<NativeThread?>(nil)
    private let log = Mutex<ServerLog?>(nil)

    /// - Parameter replyLimit: how long one call may wait for an answer
    ///   (`PostgresConnection.limitReplies`).
    init(conninfo: String, node: UInt64, catchUp: ListCatchUp, replyLimit: Duration?) throws {
        let started = try NativeThread.start(name: "pg-follower") { [self] in
            var loop = FollowLoop(conninfo: conninfo, node: node, catchUp: catchUp, replyLimit: replyLimit)
            loop.run(self)
        }
        thread.withLock { $0 = started }
    }

    func setLog(_ serverLog: ServerLog) { log.withLock { $0 = serverLog } }

    fileprivate func withLog(_ body: (ServerLog) -> Void) {
        if let current = log.withLock({ $0 }) { body(current) }
    }

    fileprivate var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// Stops the thread (within one wait of its socket).
    func close() {
        stopping.store(true, ordering: .releasing)
        thread.withLock { $0.take() }?.join()
    }
}

/// The follower thread's own state.
private struct FollowLoop {
    let conninfo: String
    let node: UInt64
    let catchUp: ListCatchUp
    var database: PostgresStore?
    /// Lists another node announced commits of, with the revision
    /// announced (0: deleted).
    var announced: [ListID: Revision] = [:]
    /// The changes notices carried, per list: one consecutive run (a notice
    /// whose changes do not continue it replaces it).
    var carried: [ListID: [Change]] = [:]
    /// Lists the reconciliation found to differ from what the node knows:
    /// read whatever the node knows.
    var differing: Set<ListID> = []
    var nextReconcile: UInt64 = 0
    /// When every list left pending was deferred: the view's generation
    /// before that pass, and when to ask again whatever happens.
    var deferred: (generation: UInt64, retryAt: UInt64)?
    var backoff: UInt64 = 50_000_000

    let replyLimit: Duration?

    init(conninfo: String, node: UInt64, catchUp: ListCatchUp, replyLimit: Duration?) {
        self.replyLimit = replyLimit
        self.conninfo = conninfo
        self.node = node
        self.catchUp = catchUp
    }

    mutating func run(_ follower: PostgresFollower) {
        while !follower.isStopping {
            do {
                try round()
                backoff = 50_000_000
            } catch {
                if database?.connection.isUsable != true {
                    database = nil
                    follower.withLog { $0.warn("postgres_follower_lost", ["error": "\(error)"]) }
                    pause(backoff, follower)
                    backoff = min(backoff * 2, 2_000_000_000)
                } else {
                    follower.withLog { $0.warn("postgres_follow_failed", ["error": "\(error)"]) }
                    pause(50_000_000, follower)
                }
            }
        }
    }

    /// Connects if needed, waits for notifications (at most until the next
    /// reconciliation, or briefly while lists are deferred), and catches
    /// up: first the lists announced, then (when due) the reconciliation,
    /// so that a notice never waits behind the read of every revision.
    private mutating func round() throws {
        if database == nil {
            let connection = try PostgresConnection(conninfo: conninfo)
            connection.limitReplies(to: replyLimit)
            try connection.listenForCommits()
            database = PostgresStore(connection: connection)
            nextReconcile = 0  // what was missed while away is found now
        }
        let database = database!
        let now = monotonicNanoseconds()
        let untilReconcile = nextReconcile > now ? Int32(min((nextReconcile - now) / 1_000_000, 1000)) : 0
        let waiting = announced.isEmpty && differing.isEmpty
        let timeout = waiting ? untilReconcile : min(untilReconcile, PostgresFollower.retryMilliseconds)
        var noticed = false
        for notification in try database.connection.awaitNotifications(timeoutMilliseconds: timeout) {
            guard CommitNotice.sender(of: notification.payload) != node,
                  let notice = CommitNotice.parse(notification.payload, held: { list, revision in
                      catchUp.view.revision(of: list).map { $0 >= revision } ?? false
                  }) else { continue }
            for entry in notice.lists {
                announced[entry.list] = max(announced[entry.list] ?? 0, entry.revision)
                carry(entry)
            }
            noticed = true
        }
        if noticed || mayHaveMoved { try catchUpPending(database) }
        if monotonicNanoseconds() >= nextReconcile {
            try reconcile(database)
            nextReconcile = monotonicNanoseconds() + PostgresFollower.reconcileInterval
            try catchUpPending(database)
        }
    }

    /// Keeps the changes `entry` carried, after those of its list kept
    /// already if they continue them; a run that would outgrow one round of
    /// `ListCatchUp.follow` is dropped (the database is read instead).
    private mutating func carry(_ entry: CommitNotice.Entry) {
        guard let first = entry.changes.first else { return }
        if let last = carried[entry.list]?.last, last.revision + 1 == first.revision {
            carried[entry.list]! += entry.changes
        } else {
            carried[entry.list] = entry.changes
        }
        if carried[entry.list]!.count > ListCatchUp.batch { carried[entry.list] = nil }
    }

    /// Follows every list announced or found differing, with one read for
    /// all of them (`ListCatchUp.follow(_:database:)`; one statement per
    /// list made the follower cost as much CPU as its node's committer with
    /// 2 nodes). An announced revision the node already holds (read with an
    /// earlier notice's changes, or caught up by its committer) costs no query.
    private mutating func catchUpPending(_ database: PostgresStore) throws {
        let generation = catchUp.view.generation
        defer {
            deferred = announced.isEmpty && differing.isEmpty ? nil
                : (generation, monotonicNanoseconds() + PostgresFollower.deferredRetry)
        }
        for (list, revision) in announced where !differing.contains(list) && revision > 0 {
            if let known = catchUp.view.revision(of: list), known >= revision {
                announced[list] = nil
                carried[list] = nil
            }
        }
        // A list found differing is read whatever a notice announced.
        let lists = Set(announced.keys).union(differing).map { list in
            (list: list, noticed: differing.contains(list) ? 0 : announced[list] ?? 0)
        }
        guard !lists.isEmpty else { return }
        for (list, outcome) in try catchUp.follow(lists, database: database, carried: carried) where outcome == .caughtUp {
            announced[list] = nil
            carried[list] = nil
            differing.remove(list)
        }
    }

    /// Whether a pass over the pending lists can do anything: none was
    /// deferred, or the committed view moved since, or the retry is due.
    private var mayHaveMoved: Bool {
        guard let deferred else { return true }
        return catchUp.view.generation != deferred.generation || monotonicNanoseconds() >= deferred.retryAt
    }

    /// Marks every list whose stored revision differs from what the node
    /// knows committed (or that the node knows and the database no longer has).
    private mutating func reconcile(_ database: PostgresStore) throws {
        let stored = try database.listRevisions()
        let known = catchUp.view.all
        for (list, revision) in stored where known[list] != revision { differing.insert(list) }
        for list in known.keys where stored[list] == nil { differing.insert(list) }
    }

    private func pause(_ nanoseconds: UInt64, _ follower: PostgresFollower) {
        let until = monotonicNanoseconds() + nanoseconds
        while !follower.isStopping && monotonicNanoseconds() < until {
            var request = timespec(tv_sec: 0, tv_nsec: 10_000_000)
            nanosleep(&request, nil)
        }
    }
}
