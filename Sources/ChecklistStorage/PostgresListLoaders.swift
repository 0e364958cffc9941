import ChecklistLog
import ChecklistModel
import ChecklistPostgres
import ChecklistSnapshot
import ChecklistStore
import ChecklistThreads
import ChecklistWire
import Synchronization

/// The loader threads of a PostgreSQL node's list cache (docs/POSTGRES.md,
/// "Threads" and "The cache"): a small fixed set, each owning its own
/// `PostgresConnection` (made on first use, dropped and made again when it
/// breaks). A load reads the list's checkpoint and later changes into a
/// private `Store` and installs the result in one step
/// (`Store.installLoaded`), so no reader sees a list half loaded and no
/// event loop waits on the database. Requests for a list being loaded
/// share that load. They also catch up a list a request names a newer
/// revision of than the node holds (`catchUp`, through `ListCatchUp` like
/// the follower) and read a CHANGES_SINCE's changes from the `changes`
/// table when the node's feed does not reach back (`readChanges`).
/// Between jobs, and after each, the cache is trimmed (`ListCache.trim`),
/// at least once a second.
final class PostgresListLoaders: ListLoading {
    /// How often an install is tried again when the list moved on while it
    /// was read (a commit of it not yet in the database), and the pause
    /// before each retry.
    static let installAttempts = 20
    static let retryPause: UInt64 = 25_000_000
    /// Threads inflating a big checkpoint while the loader decodes it: one
    /// per core, at most 4 (the inflation of a 1M-item list is about a third
    /// of its load; more threads only wait on the decoder).
    static let inflateThreads = min(4, SnapshotReader.defaultInflateThreads)
    /// How long a catch-up follows a list before the request is handled
    /// anyway (the database unreachable), and its pause while the node's
    /// own commit of the list is in flight.
    static let catchUpNanoseconds: UInt64 = 2_000_000_000
    static let catchUpRetryPause: UInt64 = 2_000_000

    private enum Job {
        /// Waited for by `Queue.waiting[list]`.
        case load(ListID, Namespace)
        case catchUp(ListID, Revision, done: @Sendable (ChecklistError?) -> Void)
        case readChanges(StoredChangesRead, done: @Sendable (StoredChanges) -> Void)
        case lookUpKey(RetriedPatch, done: @Sendable (ChecklistError?) -> Void)
    }

    private struct Queue {
        var jobs: [Job] = []
        /// Waiters per list queued or being loaded.
        var waiting: [ListID: [@Sendable (ChecklistError?) -> Void]] = [:]
        var closing = false
    }

    private let queue = ConditionLock(Queue())
    private let conninfo: String
    private let store: Store
    private let cache: ListCache
    private let retain: @Sendable (Change) -> Void
    /// Where the lists a request names a newer revision of are caught up.
    let following: ListCatchUp
    private let log = Mutex<ServerLog?>(nil)
    private let threads = Mutex<[NativeThread]>([])

    /// Starts `cache.configuration.loaderThreads` threads.
    /// - Parameters:
    ///   - following: catches a list up to the database (`catchUp`).
    ///   - retain: takes each change a load read (the change feed): the retained ones the checkpoint holds, then those replayed.
    ///   - replyLimits: how long one call may wait for an answer
    ///     (`PostgresConnection.limitReplies`): a list's load (which may
    ///     rightly take long), and every other read (a request waits on it).
    init(conninfo: String, store: Store, cache: ListCache, following: ListCatchUp,
         replyLimits: (load: Duration?, read: Duration?), retain: @escaping @Sendable (Change) -> Void) throws {
        self.conninfo = conninfo
        self.store = store
        self.cache = cache
        self.following = following
        self.retain = retain
        for index in 0..<cache.configuration.loaderThreads {
            let thread = try NativeThread.start(name: "pg-loader-\(index)") { [self] in
                var worker = LoaderConnection(conninfo: conninfo, replyLimits: replyLimits)
                run(&worker)
            }
            threads.withLock { $0.append(thread) }
        }
    }

    func setLog(_ serverLog: ServerLog) { log.withLock { $0 = serverLog } }

    func load(_ list: ListID, in ns: Namespace, done: @escaping @Sendable (ChecklistError?) -> Void) {
        let queued = queue.withLock { state -> Bool in
            guard !state.closing else { return false }
            if state.waiting[list] != nil {
                state.waiting[list]!.append(done)  // a load of it is queued or running: share it
            } else {
                state.waiting[list] = [done]
                state.jobs.append(.load(list, ns))
            }
            return true
        }
        if queued {
            queue.signal(.work)
        } else {
            done(ChecklistError(.shuttingDown, "the server is shutting down"))
        }
    }

    func catchUp(_ list: ListID, to revision: Revision, done: @escaping @Sendable (ChecklistError?) -> Void) {
        if !enqueue(.catchUp(list, revision, done: done)) { done(Self.shuttingDown) }
    }

    func readChanges(_ read: StoredChangesRead, done: @escaping @Sendable (StoredChanges) -> Void) {
        if !enqueue(.readChanges(read, done: done)) { done(.unread(Self.shuttingDown)) }
    }

    func lookUpKey(_ key: RetriedPatch, done: @escaping @Sendable (ChecklistError?) -> Void) {
        if !enqueue(.lookUpKey(key, done: done)) { done(Self.shuttingDown) }
    }

    /// Queues `job` unless closing; says whether it was.
    private func enqueue(_ job: Job) -> Bool {
        let queued = queue.withLock { state -> Bool in
            guard !state.closing else { return false }
            state.jobs.append(job)
            return true
        }
        if queued { queue.signal(.work) }
        return queued
    }

    /// What a read queued when the loaders close is answered.
    private static let shuttingDown = ChecklistError(.shuttingDown, "the server is shutting down")

    /// Stops the threads (queued loads are answered SHUTTING_DOWN; queued
    /// catch-ups end, stored changes are not read: SHUTTING_DOWN).
    func close() {
        let (loads, jobs) = queue.withLock { state -> ([@Sendable (ChecklistError?) -> Void], [Job]) in
            state.closing = true
            defer { state.jobs = []; state.waiting = [:] }
            return (state.waiting.values.flatMap { $0 }, state.jobs)
        }
        queue.broadcast(.work)
        for done in loads { done(ChecklistError(.shuttingDown, "the server is shutting down")) }
        for job in jobs { Self.abandon(job) }
        for thread in threads.withLock({ $0 }) { thread.join() }
    }

    private static func abandon(_ job: Job) {
        switch job {
        case .load: break  // its waiters are answered with the loads
        case .catchUp(_, _, let done): done(shuttingDown)
        case .readChanges(_, let done): done(.unread(shuttingDown))
        case .lookUpKey(_, let done): done(shuttingDown)
        }
    }

    // MARK: On a loader thread

    private func run(_ worker: inout LoaderConnection) {
        while true {
            let (job, closing) = queue.withLock(waitingOn: .work, until: { !$0.jobs.isEmpty || $0.closing },
                                                deadline: monotonicNanoseconds() &+ 1_000_000_000) { state, _ in
                (state.jobs.isEmpty || state.closing ? nil : state.jobs.removeFirst(), state.closing)
            }
            if closing {
                if let job { Self.abandon(job) }
                return
            }
            switch job {
            case .load(let list, let ns):
                let error = load(list, in: ns, &worker)
                let waiters = queue.withLock { $0.waiting.removeValue(forKey: list) ?? [] }
                for done in waiters { done(error) }
            case .catchUp(let list, let revision, let done):
                done(catchUp(list, to: revision, &worker))
            case .readChanges(let read, let done):
                done(readChanges(read, &worker))
            case .lookUpKey(let key, let done):
                done(lookUpKey(key, &worker))
            case nil:
                break
            }
            cache.trim()
        }
    }

    /// Loads one list; nil once it is resident (or gone).
    private func load(_ list: ListID, in namespace: Namespace, _ worker: inout LoaderConnection) -> ChecklistError? {
        let job = (list: list, namespace: namespace)
        let started = monotonicNanoseconds()
        var lastError = "the list kept changing while it was loaded"
        for attempt in 0..<Self.installAttempts {
            if store.residency(of: job.list, in: job.namespace) != .unloaded { return nil }
            if attempt > 0 { pauseBeforeRetry() }
            do {
                let database = try worker.database(loading: true)
                let loaded = Store(limits: store.limits)
                var toFeed: [Change] = []  // retained, then replayed
                let sink = StoreRestoreSink(store: loaded)
                // The retained changes the checkpoint holds come first (revision
                // order), then those replayed: all go to the change feed, so
                // CHANGES_SINCE reaches back the retention, not just to the checkpoint.
                let report = try database.loadList(job.list, into: sink, retained: { toFeed.append($0) },
                                                   inflateThreads: Self.inflateThreads) { change in
                    try loaded.replay(change)
                    toFeed.append(change)
                }
                guard let report else { return nil }  // deleted meanwhile
                switch store.installLoaded(job.list, from: loaded) {
                case .installed:
                    let nanos = monotonicNanoseconds() - started
                    for change in toFeed { retain(change) }
                    cache.loaded(job.list, nanoseconds: nanos)
                    withLog { log in
                        guard log.isEnabled(.debug) else { return }
                        log.debug("list_loaded", ["list": job.list, "items": store.summaryItems(job.list, job.namespace),
                                                  "checkpointBytes": report.checkpointBytes,
                                                  "changesReplayed": report.changesReplayed,
                                                  "ms": Double(nanos / 1000) / 1000])
                    }
                    return nil
                case .notNeeded:
                    return nil
                case .revisionMoved:
                    continue  // its newest commit is not in the database yet: read it again
                }
            } catch {
                worker.dropIfBroken(error)
                lastError = "\(error)"
            }
        }
        cache.loadFailed()
        withLog { $0.warn("list_load_failed", ["list": job.list, "error": lastError]) }
        return ChecklistError(.unavailable, "list \(job.list) could not be loaded from the database; try again later")
    }

    /// Follows `list` (resident, pinned by the parked request; or not held
    /// at all: perhaps another node made it) from the database until the
    /// node holds `revision` committed, the database turns out not to hold
    /// it, or `catchUpNanoseconds` passed (the node's own commit of it in
    /// flight is waited for, `ListCatchUp.deferred`). A summary-only list
    /// is left to the follower.
    private func catchUp(_ list: ListID, to revision: Revision, _ worker: inout LoaderConnection) -> ChecklistError? {
        let deadline = monotonicNanoseconds() + Self.catchUpNanoseconds
        while (following.view.revision(of: list) ?? 0) < revision, store.cachedRevision(of: list) == nil || store.isResident(list) {
            guard !isClosing else { return ChecklistError(.shuttingDown, "the server is shutting down") }
            guard monotonicNanoseconds() < deadline else {
                // Not read: the database may well hold it. Never answered as
                // if it did not (RESYNC_REQUIRED, CONFLICT, NOT_FOUND).
                return ChecklistError(.unavailable, "list \(list) could not be brought up to revision \(revision) from the database; try again")
            }
            do {
                // A call is bounded by what is left of the catch-up's window
                // (plus the margin), so a link passing no bytes cannot hold the
                // request much past it.
                let database = try worker.database()
                let left = Duration.nanoseconds(Int64(deadline - min(deadline, monotonicNanoseconds())))
                database.connection.limitReplies(to: left + PostgresConnection.replyMargin)
                switch try following.follow(list, database: database) {
                case .more: continue
                case .caughtUp: return nil  // what the database holds is in; if not `revision`, it holds less
                case .deferred: pause(Self.catchUpRetryPause)
                }
            } catch {
                worker.dropIfBroken(error)
                withLog { $0.warn("list_catch_up_failed", ["list": list, "error": "\(error)"]) }
                pause(Self.retryPause)
            }
        }
        return nil
    }

    /// Reads the database's answer to `key` into the store's idempotency
    /// memory when it has one; nil, or `UNAVAILABLE` when it cannot be read
    /// (then nobody knows whether the key was answered).
    private func lookUpKey(_ key: RetriedPatch, _ worker: inout LoaderConnection) -> ChecklistError? {
        do {
            let found = try worker.database().lookUp(namespace: key.namespace, client: key.key.client, sequence: key.key.sequence)
            if case .answered(let answer) = found {
                store.restoreIdempotency(IdempotencyMemory(clients: [
                    IdempotencyMemory.Client(namespace: key.namespace, client: key.key.client, floor: 0, answers: [answer])]))
            }
            return nil
        } catch {
            worker.dropIfBroken(error)
            withLog { $0.warn("key_lookup_failed", ["client": key.key.client, "sequence": key.key.sequence, "error": "\(error)"]) }
            return ChecklistError(.unavailable, "the database could not be read for this idempotency key; try again")
        }
    }

    /// The stored changes `read` asks for, encoded for the feed.
    private func readChanges(_ read: StoredChangesRead, _ worker: inout LoaderConnection) -> StoredChanges {
        do {
            switch try worker.database().changes(in: read.namespace, list: read.list, after: read.after, limit: read.limit) {
            case .changes(let changes, _):
                return .changes(changes.map { EncodedChange($0, maxFrameBytes: read.maxFrameBytes) })
            case .resyncRequired, .noSuchList:
                return .notRetained
            }
        } catch {
            worker.dropIfBroken(error)
            withLog { $0.warn("stored_changes_failed", ["list": read.list, "error": "\(error)"]) }
            return .unread(ChecklistError(.unavailable, "the database could not be read for the changes of list \(read.list); try again"))
        }
    }

    private var isClosing: Bool { queue.withLock { $0.closing } }

    private func pause(_ nanoseconds: UInt64) {
        queue.withLock(waitingOn: .work, until: { $0.closing },
                       deadline: monotonicNanoseconds() &+ nanoseconds) { _, _ in }
    }

    private func pauseBeforeRetry() { pause(Self.retryPause) }

    private func withLog(_ body: (ServerLog) -> Void) {
        if let current = log.withLock({ $0 }) { body(current) }
    }
}

/// One loader thread's connection, made on first use.
private struct LoaderConnection {
    let conninfo: String
    /// How long a call may wait: a list's load, any other read.
    let replyLimits: (load: Duration?, read: Duration?)
    var store: PostgresStore?

    init(conninfo: String, replyLimits: (load: Duration?, read: Duration?)) {
        self.conninfo = conninfo
        self.replyLimits = replyLimits
    }

    /// The connection (made again when it broke), its calls bounded for a
    /// list's load or for the other reads.
    mutating func database(loading: Bool = false) throws -> PostgresStore {
        let database: PostgresStore
        if let store, store.connection.isUsable {
            database = store
        } else {
            database = PostgresStore(connection: try PostgresConnection(conninfo: conninfo))
            store = database
        }
        database.connection.limitReplies(to: loading ? replyLimits.load : replyLimits.read)
        return database
    }

    mutating func dropIfBroken(_ error: any Error) {
        if store?.connection.isUsable != true || (error as? PostgresError)?.code == .connectionLost { store = nil }
    }
}

extension Store {
    /// The item count of a list (for a log line); 0 when it is gone.
    fileprivate func summaryItems(_ list: ListID, _ ns: Namespace) -> UInt64 {
        (try? summary(in: ns, list: list))?.itemCount ?? 0
    }
}
