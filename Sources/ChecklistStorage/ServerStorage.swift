import ChecklistLog
import ChecklistModel

/// Where a server keeps its data: the one seam between the protocol side
/// (sessions, live sync, metrics) and the store's durable home. Today's
/// implementation is the local data directory (`DataDirectoryStorage`:
/// snapshots plus a write-ahead log); a database-backed store is a second
/// implementation of this protocol, not a fork of the server.
///
/// ## Life cycle
/// 1. **Start from the stored state.** A `StorageOpener` makes the storage
///    from a new, empty `Store`: it loads what is stored into that store and
///    hands every change it replays to the change feed (today
///    `SubscriptionHub.retain`, so CHANGES_SINCE reaches back past a
///    restart). Nothing is served yet and nothing else commits meanwhile.
/// 2. **Commits.** The store's commit fan-out then calls `append` with each
///    commit's changes (`appendEach` with a batch of patches' commits),
///    before live sync sees them (`ChecklistService` wires it so).
/// 3. **Upkeep.** `startUpkeep(log:)` once the server is up: the start's
///    log line and background work such as snapshots and compaction.
/// 4. **End.** `close()` after the server has stopped: stops the upkeep,
///    makes what was appended durable, releases the stored state.
///
/// ## Positions and ordering
/// Every commit handed to `append` gets a position (today the log's LSN),
/// increasing in commit order, which is per list revision order.
/// `lastPosition` is the newest position given out: a connection reads it
/// before and after a request to learn whether (and up to where) its answer
/// must wait.
///
/// ## Durable
/// A position is *durable* once its commit survives what the storage
/// promises to survive (for the data directory under `--fsync always`: the
/// log is fsynced that far; for a database: the transaction committed).
/// When `answersWaitForDurability` is true, an answer to a request that
/// committed, and every answer after it on the same connection, leaves only
/// once `commitState(of:)` says `.durable` for its position; the connection
/// asks for a wake-up with `notify(waiter:at:wake:)`.
///
/// ## Failure
/// A commit may fail after it was appended (a database transaction that
/// aborts). Its position, and every position in the same failed batch,
/// then reads `.failed` (until the storage commits it on a later try and
/// says so, `CommitStates.durableIncludingFailed`); waiters are woken. An
/// answer held for a failed position is never sent as an acknowledgement:
/// the connection sends `ERROR UNAVAILABLE` with its request id instead
/// (`AnswerHolder.outcomeUnknown`) and stays open. The outcome is
/// unknown to the client: a storage may commit the change later (the
/// PostgreSQL committer keeps a failed batch and commits it when the
/// database is back); a retry with the idempotency key learns it. The data
/// directory never fails a single commit: a failure it cannot recover from
/// (the local log cannot write or fsync) is reported through the opener's
/// `onFailure`, and the server stops (`event=log_failed`, exit 1) with the
/// answers still held unsent.
///
/// ## Threads
/// `append` runs under the store's lock, in commit order: it must be short,
/// must not block on I/O and must not call the store. `lastPosition`,
/// `commitState(of:)`, `notify`, `cancelNotification` and `status` may be
/// called from any thread (the event loops call them) and never block.
/// Wake-ups run on the storage's own thread: they must only hand work to
/// the waiter's loop.
public protocol ServerStorage: AnyObject, Sendable {
    /// Takes one commit's changes (one request's, or a whole import), in
    /// commit order, under the store's lock.
    func append(_ changes: [Change])

    /// Takes several commits of one change each (`changes`, in commit
    /// order: a batch of patches), under the store's lock, as `append`
    /// would take them one after the other: each gets its own position.
    func appendEach(_ changes: [Change])

    /// Whether the patches one read of a connection brings in may be
    /// applied as one batch (`Store.patch(in:batch:into:)`: one hold of the
    /// store's lock, one `appendEach`): true when the batch's commits get
    /// consecutive positions that become durable together and never fail
    /// alone, so that an answer of the batch waiting for the batch's last
    /// position waits exactly as long as for its own.
    var takesPatchBatches: Bool { get }

    /// Whether answers to changes wait until their commit is durable.
    var answersWaitForDurability: Bool { get }

    /// The position of the newest commit handed to `append`.
    var lastPosition: UInt64 { get }

    /// Whether the commit at `position` is durable, failed, or neither yet.
    func commitState(of position: UInt64) -> CommitState

    /// Wakes `waiter` once `position` is durable or has failed (at once if
    /// it already is), replacing an earlier request of the same waiter.
    func notify(waiter: UInt64, at position: UInt64, wake: @escaping @Sendable () -> Void)

    /// Forgets `waiter`'s wake-up (its connection closed).
    func cancelNotification(waiter: UInt64)

    /// Logs what the start loaded and starts the background work (snapshots,
    /// compaction), whose events go to `log` too.
    func startUpkeep(log: ServerLog)

    /// What STATS and /metrics report about durability. Cheap; never blocks.
    var status: DurabilityStatus { get }

    /// Stops the upkeep, makes everything appended durable and releases the
    /// stored state. After the server has stopped.
    func close() throws

    /// The cache of lists when the storage keeps rows elsewhere and loads
    /// them on first use (PostgreSQL); nil when every list is in memory.
    var listCache: ListCache? { get }

    /// The answer that replaces a held PATCH_OK of `list` at `revision`
    /// whose commit, at a position in `positions`, lost to another node's
    /// and was rebased (PostgreSQL with several nodes); nil when it was
    /// committed as it was. Taken once; asked only once `positions` are
    /// durable. Never blocks.
    func rebasedAnswer(in positions: ClosedRange<UInt64>, list: ListID, revision: Revision) -> RebasedAnswer?

    /// The answer that replaces a held PATCH_OK of `list` at `revision`
    /// that a retry of the keyed patch `retry` got from the idempotency
    /// memory while the original was in flight, when the original's commit
    /// was rebased; nil otherwise. Not taken (the original's connection
    /// takes its own); asked once the commit the retry waited for is
    /// durable. Never blocks.
    func rebasedAnswer(ofRetry retry: RetriedPatch, list: ListID, revision: Revision) -> RebasedAnswer?

    /// The position of the commit, not durable yet, of the keyed patch a
    /// retry `retry` was answered from the idempotency memory for; nil when
    /// that commit is durable (or the storage does not say). The retry's
    /// answer waits for that position and is replaced by `ERROR
    /// UNAVAILABLE` (outcome unknown) while it is failed. Never blocks.
    func uncommittedPosition(ofRetry retry: RetriedPatch) -> UInt64?

    /// Whether a page read while its list's changes were in flight
    /// (`read`) still shows what was committed at its revision, asked once
    /// those changes are durable: false when they were rewritten meanwhile
    /// (rebased onto another node's commits, the list reloaded). Never blocks.
    func committedAsRead(_ read: UncommittedRead) -> Bool

    /// The error a commit in `positions` was refused with for good (a
    /// quota the database's counts showed passed, `CommitStates.refuse`):
    /// a held answer whose commit failed is replaced by it instead of
    /// `ERROR UNAVAILABLE`. Nil when none was. Never blocks.
    func refusal(in positions: ClosedRange<UInt64>) -> ChecklistError?
}

extension ServerStorage {
    /// One commit after the other.
    public func appendEach(_ changes: [Change]) {
        for change in changes { append([change]) }
    }

    /// No: each request is applied and appended on its own.
    public var takesPatchBatches: Bool { false }

    /// Every list is in memory.
    public var listCache: ListCache? { nil }

    /// Never: only a storage shared by several nodes rebases commits.
    public func rebasedAnswer(in positions: ClosedRange<UInt64>, list: ListID, revision: Revision) -> RebasedAnswer? { nil }

    /// Never, as above.
    public func rebasedAnswer(ofRetry retry: RetriedPatch, list: ListID, revision: Revision) -> RebasedAnswer? { nil }

    /// Not known: a retry waits for the newest commit when that is pending.
    public func uncommittedPosition(ofRetry retry: RetriedPatch) -> UInt64? { nil }

    /// Always: only a storage shared by several nodes rewrites a list's changes in flight.
    public func committedAsRead(_ read: UncommittedRead) -> Bool { true }

    public func refusal(in positions: ClosedRange<UInt64>) -> ChecklistError? { nil }
}

/// Where one commit stands (`ServerStorage.commitState(of:)`).
public enum CommitState: Sendable, Hashable {
    /// Not known durable yet: its answer waits.
    case pending
    /// It survives what the storage promises: its answer may leave.
    case durable
    /// It will never be durable: its answer must not be sent.
    case failed
}
