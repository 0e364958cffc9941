import ChecklistLog
import ChecklistModel
import ChecklistStore
import Synchronization

/// The memory of a PostgreSQL node as a cache of lists (docs/POSTGRES.md,
/// "The cache"): every list's summary is in the `Store`, a list's rows only
/// after first use. A request that needs rows pins its lists (`pin`); one
/// whose lists are not all resident is parked by its connection while the
/// loader threads (`prepare`) bring them in, then dispatched again (so is
/// one that names a revision the node has not followed yet, or that reads
/// changes past the node's retained feed). Resident
/// lists are accounted in bytes (`Store.residentBytes(of:)`) and the least
/// recently used ones are evicted while the total is over `maxBytes`
/// (`trim`), never one that is pinned or that has changes the database
/// has not committed yet. A list larger than the whole cache is loaded
/// anyway and is evictable once unpinned.
///
/// Locking rule: `trimming`, then `state`, then the store's lock, never
/// the other way round. `state`'s mutex is held when the store's lock is
/// taken (`pin` asks the store about a list it does not know, `trim`
/// evicts); nothing under the store's lock calls the cache. The committer reports committed revisions without the
/// store's lock (`committed(_:)`).
public final class ListCache: Sendable {
    /// What a cache is started with.
    public struct Configuration: Sendable, Hashable {
        /// The budget for resident lists' rows, in bytes (`--cache-bytes`).
        public var maxBytes: Int
        /// Threads loading lists, each with its own database connection.
        public var loaderThreads: Int
        /// The longest a request waits for its database reads (a load, a
        /// catch-up, a key): past it, it is answered `UNAVAILABLE`, so a link
        /// that passes no bytes, or loaders busy with one, cannot hold it.
        /// Nil: as long as they take. `PostgresStorage` sets the statement
        /// timeout plus the margin when it is not given.
        public var waitLimit: Duration?

        /// The default budget: 1 GiB, room for a few million rows of short
        /// texts; `--cache-bytes` sets it.
        public static let defaultMaxBytes = 1 << 30

        public init(maxBytes: Int = Configuration.defaultMaxBytes, loaderThreads: Int = 2, waitLimit: Duration? = nil) {
            self.maxBytes = maxBytes
            self.loaderThreads = max(1, loaderThreads)
            self.waitLimit = waitLimit
        }
    }

    /// What /metrics reports about the cache.
    public struct Status: Sendable, Hashable {
        public var maxBytes: Int
        public var residentBytes: Int
        public var residentLists: Int
        public var loads: UInt64
        public var loadFailures: UInt64
        public var evictions: UInt64
        public var loadNanoseconds: UInt64
        public var maxLoadNanoseconds: UInt64
        /// Requests parked now, waiting for a load.
        public var parked: Int
    }

    /// Pins taken by `pin`: give `pinned` back to `unpin`.
    package struct Pins: Sendable {
        /// The lists pinned (those of the namespace, resident or not).
        package var pinned: [ListID]
        /// The pinned lists whose rows are not in memory: load them first.
        package var missing: [ListID]
    }

    private struct Entry {
        var resident: Bool
        var pins = 0
        /// When it was last pinned or unpinned (`State.clock`).
        var lastUse: UInt64 = 0
        var bytes = 0
        /// The revision `bytes` was measured at (nil: not measured yet).
        var measuredAt: Revision?
    }

    private struct State {
        var entries: [ListID: Entry] = [:]
        /// Revisions the database holds, from the start and the committer.
        var committed: [ListID: Revision]
        var clock: UInt64 = 0
        var loads: UInt64 = 0
        var loadFailures: UInt64 = 0
        var evictions: UInt64 = 0
        var loadNanoseconds: UInt64 = 0
        var maxLoadNanoseconds: UInt64 = 0
        var parked = 0
        /// A list was installed since memory was last given back.
        var loadedSinceGiveBack = false
        /// Times `trim` gave memory back (after evictions or loads).
        var givenBack: UInt64 = 0
    }

    public let configuration: Configuration
    let store: Store
    private let state: Mutex<State>
    private let loader = Mutex<(any ListLoading)?>(nil)
    /// Held through a whole `trim`: one at a time, so that what one trim
    /// read of the store's residency is not made stale by another's evictions.
    private let trimming = Mutex<Void>(())
    private let log = Mutex<ServerLog?>(nil)
    /// Hands the C heap's free memory back to the system
    /// (`FreeMemory.giveBack`): evicted rows and a load's transient buffers
    /// are freed to malloc, which would keep them as resident memory.
    private let giveBack: @Sendable () -> Void

    /// - Parameters:
    ///   - committed: the revision the database holds for each list.
    ///   - giveBack: called by `trim` after it evicted lists or after lists
    ///     were loaded (a test passes a counter).
    init(store: Store, configuration: Configuration, committed: [ListID: Revision],
         giveBack: @escaping @Sendable () -> Void = FreeMemory.giveBack) {
        self.store = store
        self.configuration = configuration
        self.giveBack = giveBack
        state = Mutex(State(committed: committed))
    }

    func setLoader(_ loading: any ListLoading) { loader.withLock { $0 = loading } }
    func setLog(_ serverLog: ServerLog) { log.withLock { $0 = serverLog } }

    // MARK: Requests (event loops)

    /// Pins `lists` of `ns` for a request and says which of them must be
    /// loaded first. Lists not in `ns` are left out (the request answers
    /// NOT_FOUND for them as usual).
    package func pin(_ lists: [ListID], in ns: Namespace) -> Pins {
        state.withLock { state in
            var pins = Pins(pinned: [], missing: [])
            state.clock &+= 1
            for list in lists {
                var entry = state.entries[list]
                if entry?.resident != true {
                    switch store.residency(of: list, in: ns) {
                    case .absent: continue
                    case .resident: entry = entry ?? Entry(resident: true); entry!.resident = true
                    case .unloaded: entry = entry ?? Entry(resident: false); entry!.resident = false
                    }
                }
                entry!.pins += 1
                entry!.lastUse = state.clock
                if !entry!.resident { pins.missing.append(list) }
                pins.pinned.append(list)
                state.entries[list] = entry
            }
            return pins
        }
    }

    /// Gives back pins `pin` took.
    package func unpin(_ lists: [ListID]) {
        guard !lists.isEmpty else { return }
        state.withLock { state in
            state.clock &+= 1
            for list in lists {
                guard var entry = state.entries[list] else { continue }
                entry.pins = max(0, entry.pins - 1)
                entry.lastUse = state.clock
                state.entries[list] = entry
            }
        }
    }

    /// Carries out a parked request's database reads on the loader
    /// threads, in turn: loads `request.lists` (pinned by the caller), then
    /// catches up `request.catchUp`, then reads `request.storedChanges`,
    /// then looks up `request.keyLookUp`;
    /// calls `done` there once all are done, or with the error to answer
    /// the request with when a list could not be loaded.
    package func prepare(_ request: ListLoadRequest, done: @escaping @Sendable (ListLoadOutcome) -> Void) {
        guard let loading = loader.withLock({ $0 }) else {
            done(ListLoadOutcome(error: ChecklistError(.unavailable, "lists cannot be loaded now; try again")))
            return
        }
        state.withLock { $0.parked += 1 }
        let finish: @Sendable (ListLoadOutcome) -> Void = { [self] outcome in
            state.withLock { $0.parked -= 1 }
            done(outcome)
        }
        let lookUp: @Sendable (StoredChanges?) -> Void = { stored in
            guard let key = request.keyLookUp else { return finish(ListLoadOutcome(storedChanges: stored)) }
            loading.lookUpKey(key) { finish(ListLoadOutcome(error: $0, storedChanges: stored)) }
        }
        let read: @Sendable () -> Void = {
            guard let stored = request.storedChanges else { return lookUp(nil) }
            loading.readChanges(stored) { lookUp($0) }
        }
        let catchUp: @Sendable (ChecklistError?) -> Void = { error in
            if let error { return finish(ListLoadOutcome(error: error)) }
            let countdown = Countdown(count: request.catchUp.count) { error in
                if let error { finish(ListLoadOutcome(error: error)) } else { read() }
            }
            for (list, revision) in request.catchUp { loading.catchUp(list, to: revision, done: countdown.arrive) }
        }
        let countdown = Countdown(count: request.lists.count, done: catchUp)
        for list in request.lists { loading.load(list, in: request.namespace, done: countdown.arrive) }
    }

    // MARK: Loaders and committer

    /// Notes a list a loader installed: its bytes are measured now.
    func loaded(_ list: ListID, nanoseconds: UInt64) {
        let bytes = store.residentBytes(of: list)
        state.withLock { state in
            state.loads += 1
            state.loadNanoseconds &+= nanoseconds
            state.maxLoadNanoseconds = max(state.maxLoadNanoseconds, nanoseconds)
            var entry = state.entries[list] ?? Entry(resident: true)
            entry.resident = bytes != nil
            entry.bytes = bytes ?? 0
            entry.measuredAt = nil
            state.entries[list] = entry
            state.loadedSinceGiveBack = true
        }
    }

    /// Notes a load that failed.
    func loadFailed() { state.withLock { $0.loadFailures += 1 } }

    /// The committer's report: these lists' revisions are in the database
    /// (nil: deleted). Never called under the store's lock.
    func committed(_ revisions: [(ListID, Revision?)]) {
        state.withLock { state in
            for (list, revision) in revisions { state.committed[list] = revision }
        }
    }

    /// Brings the accounting up to date (lists created, imported, changed
    /// or deleted since) and evicts least recently used lists while the
    /// total is over the budget. Returns the lists evicted. After evictions
    /// or loads it gives the freed memory back to the system (`giveBack`),
    /// so the node's resident memory follows the budget, not its high water.
    @discardableResult
    func trim() -> [ListID] {
        trimming.withLock { _ in
            let evicted = trimAlone()
            let give = state.withLock { state -> Bool in
                guard state.loadedSinceGiveBack || !evicted.isEmpty else { return false }
                state.loadedSinceGiveBack = false
                state.givenBack += 1
                return true
            }
            if give { giveBack() }  // outside the cache's lock: a trim walks the heap
            return evicted
        }
    }

    /// Times `trim` gave memory back.
    var memoryGivenBack: UInt64 { state.withLock { $0.givenBack } }

    private func trimAlone() -> [ListID] {
        let resident = store.residentLists()
        let stale = state.withLock { state -> [ListID] in
            resident.compactMap { list, revision in state.entries[list]?.measuredAt == revision ? nil : list }
        }
        var measured: [ListID: (Int, Revision)] = [:]
        for (list, revision) in resident where stale.contains(list) {  // measured outside the cache's lock
            if let bytes = store.residentBytes(of: list) { measured[list] = (bytes, revision) }
        }
        let residentSet = Set(resident.map(\.list))
        let (evicted, total) = state.withLock { state -> ([ListID], Int) in
            var total = 0
            for (list, var entry) in state.entries {
                if let (bytes, revision) = measured[list] {
                    entry.bytes = bytes
                    entry.measuredAt = revision
                }
                entry.resident = residentSet.contains(list)
                if !entry.resident && entry.pins == 0 && !residentSet.contains(list) {
                    state.entries[list] = nil  // evicted or deleted, and nobody waits on it
                    continue
                }
                state.entries[list] = entry
                if entry.resident { total += entry.bytes }
            }
            for (list, (bytes, revision)) in measured where state.entries[list] == nil {
                state.entries[list] = Entry(resident: true, lastUse: 0, bytes: bytes, measuredAt: revision)
                total += bytes
            }
            guard total > configuration.maxBytes else { return ([], total) }
            var evicted: [ListID] = []
            let candidates = state.entries.filter { $0.value.resident && $0.value.pins == 0 }
                .sorted { $0.value.lastUse < $1.value.lastUse }
            for (list, entry) in candidates {
                guard total > configuration.maxBytes else { break }
                // Only at the revision the database holds: nothing uncommitted is lost.
                guard let committed = state.committed[list], store.evict(list, ifAt: committed) else { continue }
                total -= entry.bytes
                state.entries[list]?.resident = false
                state.evictions += 1
                evicted.append(list)
            }
            return (evicted, total)
        }
        if !evicted.isEmpty, let log = log.withLock({ $0 }), log.isEnabled(.debug) {
            log.debug("lists_evicted", ["lists": evicted.count, "first": evicted[0], "residentBytes": total,
                                        "maxBytes": configuration.maxBytes])
        }
        return evicted
    }

    /// The cache's figures for /metrics.
    public var status: Status {
        state.withLock { state in
            let resident = state.entries.values.filter(\.resident)
            return Status(maxBytes: configuration.maxBytes, residentBytes: resident.reduce(0) { $0 + $1.bytes },
                          residentLists: resident.count, loads: state.loads, loadFailures: state.loadFailures,
                          evictions: state.evictions, loadNanoseconds: state.loadNanoseconds,
                          maxLoadNanoseconds: state.maxLoadNanoseconds, parked: state.parked)
        }
    }
}

/// Where a `ListCache` has lists loaded, caught up and their stored
/// changes read (the PostgreSQL loader threads).
protocol ListLoading: Sendable {
    /// Loads `list` of `ns` into the store unless it is resident, then
    /// calls `done` (nil: resident or gone; else why it could not be).
    func load(_ list: ListID, in ns: Namespace, done: @escaping @Sendable (ChecklistError?) -> Void)
    /// Brings `list` (resident, or not held at all) up to at least
    /// `revision` from the database, if the database holds it, then calls
    /// `done` (nil; or why the database could not be read in time: the
    /// request is answered with it, never as if the revision did not exist).
    func catchUp(_ list: ListID, to revision: Revision, done: @escaping @Sendable (ChecklistError?) -> Void)
    /// Reads the stored changes `read` asks for, then calls `done` with them.
    func readChanges(_ read: StoredChangesRead, done: @escaping @Sendable (StoredChanges) -> Void)
    /// Reads the database's answer to `key`, if it has one, into the
    /// store's idempotency memory, then calls `done` (nil, or why the
    /// database could not be read: the request is answered with it).
    func lookUpKey(_ key: RetriedPatch, done: @escaping @Sendable (ChecklistError?) -> Void)
}

/// Calls `done` once, when `count` steps arrived (at once for none), with the first error.
private final class Countdown: Sendable {
    private let state: Mutex<(left: Int, error: ChecklistError?)>
    private let done: @Sendable (ChecklistError?) -> Void

    init(count: Int, done: @escaping @Sendable (ChecklistError?) -> Void) {
        state = Mutex((count, nil))
        self.done = done
        if count == 0 { done(nil) }
    }

    @Sendable func arrive(_ error: ChecklistError?) {
        let finished = state.withLock { state -> (Bool, ChecklistError?) in
            state.left -= 1
            if state.error == nil { state.error = error }
            return (state.left == 0, state.error)
        }
        if finished.0 { done(finished.1) }
    }
}
