import ChecklistModel
import ChecklistSnapshot
import ChecklistThreads
import ChecklistWire
import Glibc
import Synchronization

/// The write-ahead log: every `Change` the store commits is appended here
/// before its answer is sent, and replayed by `Recovery` after a crash.
///
/// `append` only encodes into an in-memory buffer (no system call unless the
/// flusher must be woken); a dedicated flusher thread writes the buffer to
/// segment files `wal-<first LSN>.log` and fsyncs as `FsyncPolicy` says.
/// Record and segment formats: Protocol/SNAPSHOT.md section 6.
///
/// Open the log only after `Recovery.run` (which cuts a torn tail and says
/// which LSN comes next). Call `close()` before dropping it.
public final class WriteAheadLog: Sendable {
    /// How the log behaves.
    public struct Options: Sendable {
        /// When appended records are fsynced (`--fsync`).
        public var policy: FsyncPolicy
        /// A new segment starts once the active one would grow past this.
        public var segmentBytes: Int
        /// Most encoded bytes buffered ahead of the flusher; `append` waits
        /// for the disk beyond it (backpressure, bounded memory).
        public var maxBufferedBytes: Int
        /// Under `.everysec`, the flusher writes (without an fsync) once this
        /// many bytes are buffered, at most half of `maxBufferedBytes`: the
        /// buffers it swaps with the appenders stay small, warm in the cache
        /// and kept, instead of growing to a second's worth of records and
        /// being given back and touched anew every second.
        public var writeBehindBytes: Int
        /// Bytes of zeros the flusher keeps written ahead of the records in
        /// the active segment (0: none), so that appending overwrites
        /// allocated blocks and an fsync writes the records alone, not also
        /// the file's grown size: under `.always`, where every answer waits
        /// for an fsync, that takes a third to a half off each fsync on ext4
        /// (Benchmarks/RESULTS.md).
        /// By default 1 MiB under `.always`, none otherwise. Recovery cuts a
        /// zeroed tail off the last segment; a complete segment has none.
        public var preallocationBytes: Int
        /// `.everysec`'s period, in nanoseconds.
        public var everysecIntervalNanoseconds: UInt64
        /// Called on the flusher thread, in LSN order, after every fsync that
        /// made new records durable. Keep it short; do not call the log from it.
        public var onDurable: (@Sendable (LSN) -> Void)?
        /// Called once, on the flusher thread, when a write or fsync fails.
        /// The log then refuses appends: durability can no longer be promised.
        public var onFailure: (@Sendable (PersistenceError) -> Void)?
        /// Makes a segment's writes durable: returns 0 or an errno. By
        /// default fdatasync(2), which flushes the data and the metadata
        /// reading it back needs (the file's size, its blocks) but not its
        /// times: under `.always` an append into the zeros laid ahead
        /// changes no size, so its sync writes the records alone. Replace
        /// it in tests to count syncs or inject failures.
        public var syncFile: @Sendable (Int32) -> Int32

        public init(policy: FsyncPolicy = .everysec, segmentBytes: Int = 64 << 20,
                    maxBufferedBytes: Int = 16 << 20, writeBehindBytes: Int = 256 << 10,
                    everysecIntervalNanoseconds: UInt64 = 1_000_000_000,
                    preallocationBytes: Int? = nil,
                    onDurable: (@Sendable (LSN) -> Void)? = nil,
                    onFailure: (@Sendable (PersistenceError) -> Void)? = nil,
                    syncFile: @escaping @Sendable (Int32) -> Int32 = { fd in Glibc.fdatasync(fd) == 0 ? 0 : errno }) {
            self.policy = policy
            self.segmentBytes = segmentBytes
            self.maxBufferedBytes = maxBufferedBytes
            self.writeBehindBytes = writeBehindBytes
            self.everysecIntervalNanoseconds = everysecIntervalNanoseconds
            self.preallocationBytes = max(0, preallocationBytes ?? (policy == .always ? 1 << 20 : 0))
            self.onDurable = onDurable
            self.onFailure = onFailure
            self.syncFile = syncFile
        }

        /// Buffered bytes that have the flusher write under `.everysec`.
        var writeBehind: Int { max(1, min(writeBehindBytes, maxBufferedBytes / 2)) }
    }

    /// The directory holding the segments.
    public let directory: String
    public let options: Options
    private let shared: LogShared
    /// The flusher thread until `close()` joins it.
    private let thread: Mutex<NativeThread?>

    /// Opens the log in `directory` to append records from `nextLSN` on
    /// (`RecoveryReport.nextLSN`; 1 for a new directory). Starts a new
    /// segment `wal-<nextLSN>.log` and the flusher thread.
    public init(directory: String, nextLSN: LSN, options: Options = Options()) throws(PersistenceError) {
        precondition(nextLSN >= 1, "LSNs start at 1")
        self.directory = directory
        self.options = options
        var segments = try LogSegments.list(in: directory)
        if let last = segments.last, last > nextLSN {
            throw PersistenceError(.misuse, "log has a segment starting at LSN \(last), past the next LSN \(nextLSN): run Recovery first",
                                   file: LogSegments.path(in: directory, firstLSN: last))
        }
        let fd = try LogSegments.create(in: directory, firstLSN: nextLSN, syncFile: options.syncFile)
        if segments.last != nextLSN { segments.append(nextLSN) }
        shared = LogShared(state: LogState(pending: WireWriter(capacity: 64 * 1024), lastAppended: nextLSN - 1,
                                           written: nextLSN - 1, durable: nextLSN - 1, segments: segments))
        let flusher = LogFlusher(shared: shared, directory: directory, options: options, fd: fd,
                                 segmentFirstLSN: nextLSN, segmentBytes: LogRecordFormat.segmentHeaderBytes)
        thread = Mutex(NativeThread.spawn(name: "checklist-wal") { var f = flusher; f.run() })
    }

    deinit {
        try? close()
    }

    /// The highest LSN known to be fsynced (0: none yet). Lock-free.
    public var durableLSN: LSN { shared.durable.load(ordering: .acquiring) }

    /// The LSN of the last appended record (0: none yet). Lock-free. Read it
    /// under the store's lock to get the LSN a snapshot starts from.
    public var lastLSN: LSN { shared.lastAppended.load(ordering: .acquiring) }

    /// The error that stopped the log, if any.
    public var failure: PersistenceError? { shared.lock.withLock { $0.failure } }

    /// Appends `change` as one record and returns its LSN (see
    /// `append(_:)` for a commit of several).
    @discardableResult
    public func append(_ change: Change) throws(PersistenceError) -> LSN {
        try append([change])
    }

    /// Appends one commit's `changes` (at least one) as one record, so that
    /// recovery finds all of them or none, and returns its LSN. Call it
    /// while holding the store's lock, so that LSN order is commit order.
    ///
    /// Cheap: encodes into a buffer, and waits only when `maxBufferedBytes`
    /// are already buffered. A commit carrying imported lists is not even
    /// encoded here: the flusher encodes it from the store's immutable
    /// copy when it writes it, so a 10M-item import holds the store's lock
    /// for no longer than a small patch. Throws `LOG_FAILED` once a write
    /// or fsync has failed, `LOG_CLOSED` after `close()`.
    @discardableResult
    public func append(_ changes: [Change]) throws(PersistenceError) -> LSN {
        let deferring = DeferredRecord.wanted(for: changes)
        return try appendRecords(count: 1) { s, lsn, durable in
            if deferring {
                s.deferred.append(DeferredRecord(offset: s.pending.count, lsn: lsn, durable: durable, changes: changes))
            } else {
                LogRecordFormat.appendRecord(lsn: lsn, durable: durable, changes: changes, into: &s.pending)
            }
        }
    }

    /// Appends each of `changes` as a record of its own (a commit of one
    /// change: a batch of patches), in order, with consecutive LSNs, in one
    /// hold of the log's lock; returns the last LSN (0 for none). The same
    /// records as `append([change])` for each in turn. Call it while
    /// holding the store's lock, as `append`. Patches only: an import's
    /// commit goes through `append`.
    @discardableResult
    public func appendEach(_ changes: [Change]) throws(PersistenceError) -> LSN {
        guard !changes.isEmpty else { return lastLSN }
        return try appendRecords(count: changes.count) { s, first, durable in
            var lsn = first
            for i in changes.indices {
                LogRecordFormat.appendRecord(lsn: lsn, durable: durable, of: changes, at: i, into: &s.pending)
                lsn += 1
            }
        }
    }

    /// The one append path: waits while `maxBufferedBytes` are buffered,
    /// then, under the lock, has `write` add `count` records from the next
    /// LSN on (given the durable LSN for their lag), publishes the last one
    /// and wakes the flusher when the policy says. Returns the last LSN.
    private func appendRecords(count: Int, _ write: (inout LogState, _ firstLSN: LSN, _ durable: LSN) -> Void)
        throws(PersistenceError) -> LSN {
        let policy = options.policy
        let limit = options.maxBufferedBytes
        let durable = shared.durable.load(ordering: .relaxed)
        let (lsn, wake): (LSN, Bool) = try shared.lock.withLock(waitingOn: .progress, until: { s in
            if s.pending.count < limit || s.failure != nil || s.closing { return true }
            if s.flusherIdle { shared.lock.signal(.work) }
            return false
        }) { (s, _) throws(PersistenceError) in
            if let failure = s.failure { throw Self.failed(failure) }
            if s.closing { throw PersistenceError(.logClosed, "the write-ahead log is closed", file: directory) }
            let first = s.lastAppended + 1
            if !s.hasPending { s.pendingFirstLSN = first }
            write(&s, first, durable)
            let lsn = first + UInt64(count) - 1
            s.lastAppended = lsn
            shared.lastAppended.store(lsn, ordering: .releasing)
            let wake: Bool
            switch policy {
            case .always, .no: wake = s.flusherIdle
            case .everysec: wake = s.flusherIdle && (s.flusherSleepsIndefinitely || s.pending.count >= options.writeBehind)
            }
            if wake { s.flusherIdle = false }
            return (lsn, wake)
        }
        if wake { shared.lock.signal(.work) }
        return lsn
    }

    /// Blocks until every record up to `lsn` is fsynced, asking the flusher
    /// for an fsync if the policy would not do one soon. For tests, offline
    /// tools and shutdown; a server uses `onDurable` instead.
    public func waitDurable(_ lsn: LSN) throws(PersistenceError) {
        let wake: Bool = shared.lock.withLock { s in
            if lsn > s.syncRequested { s.syncRequested = min(lsn, s.lastAppended) }
            let wake = s.flusherIdle
            if wake { s.flusherIdle = false }
            return wake
        }
        if wake { shared.lock.signal(.work) }
        try shared.lock.withLock(waitingOn: .progress, until: { s in
            s.durable >= min(lsn, s.lastAppended) || s.failure != nil || s.flusherExited
        }) { (s, _) throws(PersistenceError) in
            if s.durable >= min(lsn, s.lastAppended) { return }
            if let failure = s.failure { throw Self.failed(failure) }
            throw PersistenceError(.logClosed, "the write-ahead log closed before LSN \(lsn) was durable", file: directory)
        }
    }

    /// Deletes every segment all of whose records have an LSN below `lsn`
    /// (never the active segment), then fsyncs the directory. Call it only
    /// once a snapshot holding those records is durable. Returns the number
    /// of segments removed.
    @discardableResult
    public func removeSegments(before lsn: LSN) throws(PersistenceError) -> Int {
        // Decide under the lock (the flusher appends segments), delete outside.
        let candidates: [LSN] = shared.lock.withLock { s in
            var count = 0
            while count + 1 < s.segments.count && s.segments[count + 1] <= lsn { count += 1 }
            let doomed = Array(s.segments[...count])
            s.segments.removeFirst(count)
            return doomed
        }
        return try LogSegments.remove(in: directory, from: candidates, before: lsn).count
    }

    /// The first LSNs of the log's segment files, ascending.
    public var segments: [LSN] { shared.lock.withLock { $0.segments } }

    /// Writes and fsyncs everything appended, stops the flusher and closes
    /// the segment. Idempotent. Throws the log's failure, if any.
    public func close() throws(PersistenceError) {
        shared.lock.withLock { s in s.closing = true }
        shared.lock.signal(.work)
        let flusherThread: NativeThread? = thread.withLock { t in
            defer { t = nil }
            return t
        }
        flusherThread?.join()
        if let failure = failure { throw Self.failed(failure) }
    }

    private static func failed(_ failure: PersistenceError) -> PersistenceError {
        var e = failure
        e.code = .logFailed
        e.message = "the write-ahead log stopped after an earlier error: \(failure.message)"
        return e
    }
}
