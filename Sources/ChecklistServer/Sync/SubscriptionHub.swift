import ChecklistEventLoop
import ChecklistModel
import ChecklistStorage
import ChecklistStore
import ChecklistWire
import Synchronization

/// How much live sync keeps and buffers (`checklistd --retain-changes`,
/// `--retain-bytes`, `--max-push-buffer`).
public struct LiveSyncConfiguration: Hashable, Sendable {
    /// Changes retained per list for CHANGES_SINCE and catch-up.
    public var retainChangesPerList: Int = 1000
    /// Encoded bytes retained for all lists together (oldest dropped first).
    public var maxRetainedBytes: Int = 64 << 20
    /// Output a subscriber's connection may have pending, plus pushes queued
    /// for it, before its subscriptions are dropped (SUBSCRIPTION_DROPPED).
    /// Also the most catch-up a SUBSCRIBE pushes.
    public var maxPushBufferBytes: Int = 4 << 20

    public init() {}
}

/// Live sync's center (Protocol/SPEC.md sections 6.11-6.15 and 9): it takes
/// every committed change from the store's `onCommit` (`publish`), encodes
/// it once, retains it in the change feed and fans it out to the
/// subscribers' event loops, batched per loop. Subscribing, reading the
/// feed and publishing are serialized by one lock, taken inside the store's
/// lock (`publish` runs in `onCommit`; `subscribe` and `changesSince` read
/// the store with `Store.withSummaries`), so a subscription starts exactly
/// between two commits: catch-up and live pushes join without a gap or a
/// duplicate.
///
/// Locking rules: lock order is store → hub → outbox. The hub's lock is
/// never held while waiting for anything; loops are woken after it is
/// released. Per-subscriber decisions (what to write, duplicates, the push
/// buffer) are made on the subscriber's loop, from its loop-confined state.
///
/// Memory is bounded: the feed by `retainChangesPerList` and
/// `maxRetainedBytes`; each subscriber's queued pushes and pending output by
/// `maxPushBufferBytes` (past it the subscriber is dropped).
public final class SubscriptionHub: Sendable {
    public let configuration: LiveSyncConfiguration
    /// The server's `maxFrameBytes`: bounds CHANGES answers and pushes.
    public let maxFrameBytes: UInt32
    /// The change feed's bounds (read outside the lock to prepare what it retains).
    private let feedConfiguration: ChangeFeed.Configuration

    private struct Registration {
        let subscriber: Subscriber
        let outbox: LoopOutbox
        var allLists: Bool
        var lists: Set<ListID>
        var epoch: UInt64
    }

    private struct State {
        var feed: ChangeFeed
        var registrations: [ObjectIdentifier: Registration] = [:]
        var byList: [ListID: Set<ObjectIdentifier>] = [:]
        var byNamespace: [Namespace: Set<ObjectIdentifier>] = [:]
        /// One per event loop that has had a subscriber.
        var outboxes: [ObjectIdentifier: LoopOutbox] = [:]

        mutating func outbox(for loop: EventLoop) -> LoopOutbox {
            if let outbox = outboxes[ObjectIdentifier(loop)] { return outbox }
            let outbox = LoopOutbox(loop: loop)
            outboxes[ObjectIdentifier(loop)] = outbox
            return outbox
        }

        /// Registers `subscriber` for pushes of `lists` (and of its whole
        /// namespace with `allLists`), on top of what it had.
        mutating func register(_ subscriber: Subscriber, epoch: UInt64, lists: [ListID], allLists: Bool) {
            var registration = registrations[subscriber.id]
                ?? Registration(subscriber: subscriber, outbox: outbox(for: subscriber.handle.eventLoop),
                                allLists: false, lists: [], epoch: epoch)
            registration.epoch = epoch
            registration.lists.formUnion(lists)
            registration.allLists = registration.allLists || allLists
            registrations[subscriber.id] = registration
            for list in lists { byList[list, default: []].insert(subscriber.id) }
            if registration.allLists { byNamespace[subscriber.namespace, default: []].insert(subscriber.id) }
        }

        mutating func remove(_ id: ObjectIdentifier) {
            guard let registration = registrations.removeValue(forKey: id) else { return }
            for list in registration.lists { byList[list]?.remove(id); if byList[list]?.isEmpty == true { byList[list] = nil } }
            if registration.allLists {
                let ns = registration.subscriber.namespace
                byNamespace[ns]?.remove(id)
                if byNamespace[ns]?.isEmpty == true { byNamespace[ns] = nil }
            }
        }
    }

    private let state: Mutex<State>
    /// With a database shared by several nodes, the revision each list has
    /// committed (the store may hold more, not committed yet): what
    /// SUBSCRIBE and CHANGES_SINCE take as a list's current revision, since
    /// only committed changes are published (`setCommittedRevisions`).
    private let committedRevision = Mutex<(@Sendable (ListID, Revision) -> Revision)?>(nil)
    private let delivered = Atomic<UInt64>(0)
    private let dropped = Atomic<UInt64>(0)
    private let published = Atomic<UInt64>(0)
    /// What `publish` prepares a batch's changes in, kept between publishes.
    private let scratch = Mutex(PreparedBatch())

    public init(configuration: LiveSyncConfiguration = LiveSyncConfiguration(),
                maxFrameBytes: UInt32 = Limits.default.maxFrameBytes) {
        self.configuration = configuration
        self.maxFrameBytes = maxFrameBytes
        feedConfiguration = ChangeFeed.Configuration(retainPerList: configuration.retainChangesPerList,
                                                     maxBytes: configuration.maxRetainedBytes)
        state = Mutex(State(feed: ChangeFeed(feedConfiguration)))
    }

    /// Makes SUBSCRIBE and CHANGES_SINCE take `revision(list, cached)` as
    /// a list's current revision instead of the store's (`cached`): for a
    /// storage that publishes changes once committed, not when applied
    /// (PostgreSQL). Called under the store's lock; set before serving.
    public func setCommittedRevisions(_ revision: @escaping @Sendable (ListID, Revision) -> Revision) {
        committedRevision.withLock { $0 = revision }
    }

    /// The committed revision of each list, given the store's (`cached`),
    /// when the storage publishes on commit; nil when every cached revision
    /// is committed (one lock for a whole read of many lists).
    var committedRevisions: (@Sendable (ListID, Revision) -> Revision)? {
        committedRevision.withLock { $0 }
    }

    /// `summary` with its revision the committed one.
    private func committed(_ summary: ListSummary?) -> ListSummary? {
        guard var summary else { return nil }
        summary.revision = currentRevision(of: summary.id, cached: summary.revision)
        return summary
    }

    // MARK: Publishing (the store's onCommit)

    /// Retains a change replayed from the log at start, so that
    /// CHANGES_SINCE and SUBSCRIBE catch-up reach back past a restart (to
    /// the newest snapshot). Nothing is pushed or counted: call it only
    /// before any client is served, in replay order.
    public func retain(_ change: Change) {
        let kept = PreparedBatch.kept(of: change, maxFrameBytes: maxFrameBytes, feed: feedConfiguration)
        state.withLock { s in
            s.feed.append(list: change.list, namespace: change.namespace, revision: change.revision,
                          isDeletion: change.isDeletion, startsHistory: change.startsHistory, retaining: kept)
        }
    }

    /// Takes a committed change: retains it and queues it for every
    /// subscriber of its list or of its namespace. Called with the store's
    /// lock held, in commit order; does not block.
    public func publish(_ change: Change) {
        publish([change])
    }

    /// `publish(_:)` for several changes, in commit order (any collection of them).
    public func publish<Changes: Collection<Change>>(_ changes: Changes) {
        publish(Array(changes))
    }

    /// `publish(_:)` for several changes, in commit order: the hub's lock
    /// is taken once for all of them, and each loop's outbox is woken once.
    /// A change is encoded only if it goes to a subscriber (`fanOut`) or the
    /// feed keeps it as a frame (a bulk change, deflated before the lock).
    /// An array, not any collection: a generic collection's subscript hands
    /// out a copy of each change (retaining what it holds), an array's
    /// element is read in place.
    public func publish(_ changes: [Change]) {
        guard !changes.isEmpty else { return }
        // A batch's changes take tens of kilobytes here, allocated and freed
        // each time (and glibc consolidating its free chunks for them): one
        // array is kept instead. Publishes are serialized by the store's
        // lock; one that finds it taken makes its own.
        var batch = PreparedBatch()
        scratch.withLock { swap(&$0, &batch) }
        defer {
            batch.removeAll()
            scratch.withLock { swap(&$0, &batch) }
        }
        let feed = feedConfiguration
        for i in changes.indices { batch.add(changes, at: i, maxFrameBytes: maxFrameBytes, feed: feed) }
        published.add(UInt64(changes.count), ordering: .relaxed)
        let limit = configuration.maxPushBufferBytes
        let wake: [LoopOutbox] = state.withLock { s in
            var wake: [ObjectIdentifier: LoopOutbox] = [:]
            // Fanning out only ever removes subscribers: none now, none for the whole batch.
            let fansOut = !s.byList.isEmpty || !s.byNamespace.isEmpty
            // The changes are read in place, field by field: not copied.
            for i in changes.indices {
                s.feed.append(list: changes[i].list, namespace: changes[i].namespace, revision: changes[i].revision,
                              isDeletion: changes[i].isDeletion, startsHistory: changes[i].startsHistory,
                              retaining: batch.take(i))
                if fansOut {
                    Self.fanOut(list: changes[i].list, namespace: changes[i].namespace, limit: limit, &s,
                                waking: &wake) { EncodedChange(changes[i], maxFrameBytes: maxFrameBytes) }
                }
            }
            return wake.isEmpty ? [] : Array(wake.values)
        }
        for outbox in wake { outbox.schedule(hub: self) }
    }

    /// Queues a change of `list` for every subscriber of the list or of
    /// `namespace`, in the hub's lock; a subscriber over `limit` queued
    /// bytes is dropped (told of its overflow). The outboxes to wake are
    /// added to `wake`. The change's frame (`encoded`) is made here, once
    /// for all its subscribers, and only when it has any.
    private static func fanOut(list: ListID, namespace: Namespace, limit: Int, _ s: inout State,
                               waking wake: inout [ObjectIdentifier: LoopOutbox], encoded: () -> EncodedChange) {
        let explicit = s.byList[list] ?? []
        let everything = s.byNamespace[namespace] ?? []
        guard !explicit.isEmpty || !everything.isEmpty else { return }
        let change = encoded()
        let size = change.frame.count
        var batches: [ObjectIdentifier: (outbox: LoopOutbox, subscribers: [Subscriber])] = [:]
        var overflows: [Registration] = []
        for id in explicit.union(everything) {
            guard let registration = s.registrations[id] else { continue }
            let subscriber = registration.subscriber
            if subscriber.queuedBytes.add(size, ordering: .relaxed).newValue > limit {
                subscriber.queuedBytes.subtract(size, ordering: .relaxed)
                s.remove(id)
                overflows.append(registration)
                continue
            }
            batches[ObjectIdentifier(registration.outbox), default: (registration.outbox, [])].subscribers.append(subscriber)
        }
        if change.isDeletion {
            for id in explicit {
                guard var registration = s.registrations[id] else { continue }
                registration.lists.remove(change.list)
                s.registrations[id] = registration
                if registration.lists.isEmpty && !registration.allLists { s.remove(id) }
            }
            s.byList[change.list] = nil
        }
        for (key, batch) in batches where batch.outbox.enqueue(.push(change, batch.subscribers)) {
            wake[key] = batch.outbox
        }
        for registration in overflows
        where registration.outbox.enqueue(.overflow(registration.subscriber, epoch: registration.epoch)) {
            wake[ObjectIdentifier(registration.outbox)] = registration.outbox
        }
    }

    // MARK: Subscribing (on the subscriber's loop)

    /// What a SUBSCRIBE produced: the answer, then the catch-up pushes to
    /// write right after it.
    struct SubscribeOutcome {
        var answer: Subscribed
        var catchUp: [EncodedChange]
    }

    /// Subscribes `subscriber` as `request` asks, atomically with respect
    /// to commits. Loop thread of the subscriber only.
    ///
    /// - Parameter fetchesPastFeed: CHANGES_SINCE reads what the feed no
    ///   longer holds from the storage (PostgreSQL): a catch-up past the
    ///   feed (a client behind, not ahead) says `FETCH` instead of `RESYNC`.
    func subscribe(_ subscriber: Subscriber, _ request: Subscribe, store: Store, fetchesPastFeed: Bool = false) -> SubscribeOutcome {
        let local = subscriber.local.value
        let budget = configuration.maxPushBufferBytes
        return store.withSummaries(in: subscriber.namespace, of: request.entries.map(\.list),
                                   includingAll: request.allLists) { requested, all in
            state.withLock { s in
                var answer = SubscribeAnswer(catchUpBudget: budget, fetchesPastFeed: fetchesPastFeed)
                for (entry, summary) in zip(request.entries, requested.map(committed)) {
                    answer.add(entry.list, summary, from: entry.revision, isExplicit: true, feed: s.feed)
                }
                for summary in all.compactMap(committed) { answer.add(summary.id, summary, from: nil, isExplicit: false, feed: s.feed) }

                local.allLists = local.allLists || request.allLists
                local.lists.formUnion(answer.explicit)
                for (list, revision) in answer.found { local.lastSent[list] = revision }
                if local.isActive {
                    s.register(subscriber, epoch: local.epoch, lists: answer.explicit, allLists: request.allLists)
                }
                return SubscribeOutcome(answer: Subscribed(entries: answer.entries), catchUp: answer.catchUp)
            }
        }
    }

    /// The SUBSCRIBED entries and catch-up of one SUBSCRIBE, built one list
    /// at a time in answer order (Protocol/SPEC.md section 6.11).
    private struct SubscribeAnswer {
        /// Catch-up bytes allowed in all (the push buffer).
        let catchUpBudget: Int
        /// A catch-up past the feed can be read with CHANGES_SINCE.
        let fetchesPastFeed: Bool
        var entries: [Subscribed.Entry] = []
        var catchUp: [EncodedChange] = []
        var catchUpBytes = 0
        var seen = Set<ListID>()
        /// The revision of every list found.
        var found: [ListID: Revision] = [:]
        /// The lists named in the request that exist.
        var explicit: [ListID] = []

        init(catchUpBudget: Int, fetchesPastFeed: Bool) {
            self.catchUpBudget = catchUpBudget
            self.fetchesPastFeed = fetchesPastFeed
        }

        /// Adds `list`'s entry (`summary` nil: it does not exist), with the
        /// catch-up from `from` when the client gave a revision.
        mutating func add(_ list: ListID, _ summary: ListSummary?, from: Revision?, isExplicit: Bool, feed: ChangeFeed) {
            guard seen.insert(list).inserted else { return }  // a list named twice: the first entry counts
            guard let summary else {
                entries.append(Subscribed.Entry(list: list, revision: 0, status: .notFound))
                return
            }
            let current = summary.revision
            let status = from.map { catchUp(list, from: $0, current: current, feed: feed) } ?? .live
            entries.append(Subscribed.Entry(list: list, revision: current, status: status))
            found[list] = current
            if isExplicit { explicit.append(list) }
        }

        /// Takes the catch-up of `list` from `from` to `current` if it is
        /// retained and fits what is left of the budget, and says so.
        private mutating func catchUp(_ list: ListID, from: Revision, current: Revision, feed: ChangeFeed) -> Subscribed.Status {
            guard from != current else { return .live }
            switch feed.changes(of: list, after: from, current: current, limit: .max, maxBytes: catchUpBudget - catchUpBytes) {
            case .changes(let changes, complete: true):
                let bytes = changes.reduce(0) { $0 + $1.frame.count }
                guard catchUpBytes + bytes <= catchUpBudget else { return .fetch }
                catchUp += changes
                catchUpBytes += bytes
                return .live
            case .changes:
                return .fetch
            case .resyncRequired:
                // Not retained here; a client behind the list may find them stored.
                return fetchesPastFeed && from < current ? .fetch : .resync
            }
        }
    }

    /// Ends the subscriptions `request` names. Loop thread of the subscriber only.
    func unsubscribe(_ subscriber: Subscriber, _ request: Unsubscribe) {
        let local = subscriber.local.value
        if request.everything {
            local.clear()
        } else {
            for list in request.lists {
                local.lists.remove(list)
                if !local.allLists { local.lastSent[list] = nil }
            }
            if !local.isActive { local.clear() }
        }
        state.withLock { s in
            guard var registration = s.registrations[subscriber.id] else { return }
            guard local.isActive else {
                s.remove(subscriber.id)
                return
            }
            for list in request.lists {
                guard registration.lists.remove(list) != nil else { continue }
                s.byList[list]?.remove(subscriber.id)
                if s.byList[list]?.isEmpty == true { s.byList[list] = nil }
            }
            s.registrations[subscriber.id] = registration
        }
    }

    /// Forgets `subscriber` (its connection closed or it was dropped).
    func unregister(_ subscriber: Subscriber) {
        state.withLock { $0.remove(subscriber.id) }
    }

    // MARK: CHANGES_SINCE

    /// The changes of `list` after `revision`, as many as fit in one CHANGES
    /// frame, and the list's current revision. When the feed does not
    /// reach back to `revision`, they come from `stored` (the changes a
    /// PostgreSQL node read from its database for this request), paged
    /// alike and ending at the list's current revision here.
    ///
    /// - Throws: `NOT_FOUND`, or `RESYNC_REQUIRED` (carrying the current
    ///   revision) when they are no longer all retained (in the feed or in
    ///   `stored`) or the client is ahead of the list.
    func changes(of list: ListID, after revision: Revision, limit: UInt64, in ns: Namespace, store: Store,
                 stored: StoredChanges? = nil) throws(ChecklistError) -> (current: Revision, changes: [EncodedChange]) {
        let maxBytes = Changes.maxChangesBytes(maxFrameBytes: maxFrameBytes)
        return try store.withSummaries(in: ns, of: [list], includingAll: false) { (requested, _) throws(ChecklistError) in
            guard let summary = committed(requested[0]) else { throw .notFound("list \(list) not found") }
            let current = summary.revision
            let since = state.withLock { s in
                s.feed.changes(of: list, after: revision, current: current, limit: Int(clamping: limit), maxBytes: maxBytes)
            }
            switch since {
            case .changes(let changes, _):
                return (current, changes)
            case .resyncRequired:
                if revision < current, case .changes(let read)? = stored,
                   let page = Self.page(read, after: revision, current: current, limit: limit, maxBytes: maxBytes) {
                    return (current, page)
                }
                // The database may hold them: not read is not gone.
                if revision < current, case .unread(let error)? = stored { throw error }
                let why = revision > current ? "the list is at revision \(current), behind the client's \(revision)"
                                             : "the changes after revision \(revision) are no longer retained"
                throw ChecklistError(.resyncRequired, "list \(list): \(why); read the list again", revision: current)
            }
        }
    }

    /// What a CHANGES answer takes of `read` (changes from the database,
    /// oldest first): those after `revision` up to `current`, paged like
    /// the feed's; nil unless there are some and they start right after
    /// `revision`.
    private static func page(_ read: [EncodedChange], after revision: Revision, current: Revision, limit: UInt64,
                             maxBytes: Int) -> [EncodedChange]? {
        let upToCurrent = read.drop { $0.revision <= revision }.prefix { $0.revision <= current && !$0.isDeletion }
        guard let first = upToCurrent.first, first.revision == revision + 1 else { return nil }
        let changes = Array(upToCurrent)
        return ChangeFeed.page(count: changes.count, limit: Int(clamping: limit), maxBytes: maxBytes,
                               bodyCount: { changes[$0].body.count }, encoded: { changes[$0] })
    }

    /// The revision of `list` that SUBSCRIBE and CHANGES_SINCE take as
    /// current, given the store's (`cached`): the committed one when the
    /// storage publishes on commit (`setCommittedRevisions`).
    func currentRevision(of list: ListID, cached: Revision) -> Revision {
        committedRevision.withLock { $0 }.map { $0(list, cached) } ?? cached
    }

    // MARK: Figures

    /// Live-sync figures, e.g. for STATS.
    public struct Statistics: Hashable, Sendable {
        public var changesPublished: UInt64
        public var pushesDelivered: UInt64
        public var subscribersDropped: UInt64
        public var subscribers: Int
        public var retainedChanges: Int
        public var retainedBytes: Int
    }

    public var statistics: Statistics {
        let (subscribers, count, bytes) = state.withLock { ($0.registrations.count, $0.feed.retainedCount, $0.feed.retainedBytes) }
        return Statistics(changesPublished: published.load(ordering: .relaxed),
                          pushesDelivered: delivered.load(ordering: .relaxed),
                          subscribersDropped: dropped.load(ordering: .relaxed),
                          subscribers: subscribers, retainedChanges: count, retainedBytes: bytes)
    }

    /// The figures as STATS reports them.
    public var syncStatus: StatsReport.SyncStatus {
        let s = statistics
        return StatsReport.SyncStatus(subscribers: UInt64(s.subscribers), changesPublished: s.changesPublished,
                                      pushesDelivered: s.pushesDelivered, subscribersDropped: s.subscribersDropped,
                                      retainedChanges: UInt64(s.retainedChanges), retainedBytes: UInt64(s.retainedBytes))
    }

    func recordDelivery() {
        delivered.add(1, ordering: .relaxed)
    }

    func recordDrop() {
        dropped.add(1, ordering: .relaxed)
    }
}

/// The storage's view of live sync: what it replays and commits goes here.
extension SubscriptionHub: LiveSyncFeed {
    public func retainReplayed(_ change: Change) { retain(change) }
    public func publishCommitted(_ changes: [Change]) { publish(changes) }
    public func takeCommittedRevisions(from revision: @escaping @Sendable (ListID, Revision) -> Revision) {
        setCommittedRevisions(revision)
    }
}
