import ChecklistModel
import ChecklistPostgres
import ChecklistSnapshot
import ChecklistStore
import ChecklistThreads
import Synchronization

/// The loader threads of a PostgreSQL node's list cache (docs/POSTGRES.md,
/// "Threads" and "The cache"): a small fixed set, each owning its own
/// `PostgresConnection` (made on first use, dropped and made again when it
/// breaks). A load reads the list's checkpoint and later changes into a
/// private `Store` and installs the result in one step
/// (`Store.installLoaded`), so no reader sees a list half loaded and no
/// event loop waits on the database. Requests for a list being loaded
/// share that load. Between loads, and after each, the cache is trimmed
/// (`ListCache.trim`), at least once a second.
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

    private struct Job {
        var list: ListID
        var namespace: Namespace
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
    private let log = Mutex<ServerLog?>(nil)
    private let threads = Mutex<[NativeThread]>([])

    /// Starts `cache.configuration.loaderThreads` threads.
    /// - Parameter retain: takes each change a load read (the change feed): the retained ones the checkpoint holds, then those replayed.
    init(conninfo: String, store: Store, cache: ListCache, retain: @escaping @Sendable (Change) -> Void) throws {
        self.conninfo = conninfo
        self.store = store
        self.cache = cache
        self.retain = retain
        for index in 0..<cache.configuration.loaderThreads {
            let thread = try NativeThread.start(name: "pg-loader-\(index)") { [self] in
                var worker = LoaderConnection(conninfo: conninfo)
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
                state.jobs.append(Job(list: list, namespace: ns))
            }
            return true
        }
        if queued {
            queue.signal(.work)
        } else {
            done(ChecklistError(.shuttingDown, "the server is shutting down"))
        }
    }

    /// Stops the threads (queued loads are answered SHUTTING_DOWN).
    func close() {
        let dropped = queue.withLock { state -> [@Sendable (ChecklistError?) -> Void] in
            state.closing = true
            defer { state.jobs = []; state.waiting = [:] }
            return state.waiting.values.flatMap { $0 }
        }
        queue.broadcast(.work)
        for done in dropped { done(ChecklistError(.shuttingDown, "the server is shutting down")) }
        for thread in threads.withLock({ $0 }) { thread.join() }
    }

    // MARK: On a loader thread

    private func run(_ worker: inout LoaderConnection) {
        while true {
            let (job, closing) = queue.withLock(waitingOn: .work, until: { !$0.jobs.isEmpty || $0.closing },
                                                deadline: monotonicNanoseconds() &+ 1_000_000_000) { state, _ in
                (state.jobs.isEmpty || state.closing ? nil : state.jobs.removeFirst(), state.closing)
            }
            if closing { return }
            if let job {
                let error = load(job, &worker)
                let waiters = queue.withLock { $0.waiting.removeValue(forKey: job.list) ?? [] }
                for done in waiters { done(error) }
            }
            cache.trim()
        }
    }

    /// Loads one list; nil once it is resident (or gone).
    private func load(_ job: Job, _ worker: inout LoaderConnection) -> ChecklistError? {
        let started = monotonicNanoseconds()
        var lastError = "the list kept changing while it was loaded"
        for attempt in 0..<Self.installAttempts {
            if store.residency(of: job.list, in: job.namespace) != .unloaded { return nil }
            if attempt > 0 { pauseBeforeRetry() }
            do {
                let database = try worker.database()
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

    private func pauseBeforeRetry() {
        queue.withLock(waitingOn: .work, until: { $0.closing },
                       deadline: monotonicNanoseconds() &+ Self.retryPause) { _, _ in }
    }

    private func withLog(_ body: (ServerLog) -> Void) {
        if let current = log.withLock({ $0 }) { body(current) }
    }
}

/// One loader thread's connection, made on first use.
private struct LoaderConnection {
    let conninfo: String
    var store: PostgresStore?

    init(conninfo: String) {
        self.conninfo = conninfo
    }

    mutating func database() throws -> PostgresStore {
        if let store, store.connection.isUsable { return store }
        let made = PostgresStore(connection: try PostgresConnection(conninfo: conninfo))
        store = made
        return made
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
