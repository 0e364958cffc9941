import ChecklistLog
import ChecklistModel
import ChecklistPersistence
import ChecklistSnapshot
import ChecklistStore
import Foundation
import Synchronization

/// The local data directory as a server's storage (`ServerStorage`): the
/// locked directory, recovery into the store at start, the write-ahead log
/// every committed change goes to (positions are its LSNs; durable means
/// fsynced), and snapshots that let old log segments go (`Compactor`).
///
/// Order at start: `init` (lock, recover, open the log), then add `append`
/// to the store's commit fan-out *before* any request is served
/// (`StorageOpener.openStore` does both).
public final class DataDirectoryStorage: ServerStorage {
    public let directory: DataDirectory
    public let log: WriteAheadLog
    public let policy: FsyncPolicy
    /// What recovery found and did.
    public let recovery: RecoveryReport
    /// When the compactor writes a snapshot.
    public let snapshots: SnapshotPolicy
    /// Connections holding answers until the log is durable.
    private let waiters: CommitStates
    private let store: Store
    private let lastSnapshot: Mutex<SnapshotRecord?>
    /// Started by `startUpkeep`, stopped by `close`.
    private let compactor = Mutex<Compactor?>(nil)

    /// The newest snapshot this process wrote, for STATS and logs.
    public struct SnapshotRecord: Sendable, Hashable {
        public var file: DataDirectory.SnapshotFile
        /// Seconds since 1970 when it was written.
        public var time: Int64
        public var items: UInt64
        public var compressedBytes: UInt64
        /// How long the store was held to take the cut.
        public var cutNanoseconds: UInt64
        public var writeNanoseconds: UInt64
        /// Written at the server's own priority because it was overdue
        /// (`SnapshotSchedule.isOverdue`: serving left the lowest priority
        /// no room), not at the lowest.
        public var overdue = false
    }

    /// Takes the directory's lock, loads the newest snapshot and replays the
    /// log after it into `store` (which must be empty and must not commit
    /// anything meanwhile), then opens the log for appending.
    ///
    /// - Parameter snapshots: when the compactor (started by `startUpkeep`)
    ///   writes a snapshot.
    /// - Parameter onReplayed: called with every change replayed from the
    ///   log into the store, in log order (e.g. `SubscriptionHub.retain`).
    /// - Parameter onFatal: called once, on the log's thread, when a write or
    ///   fsync fails: durability can no longer be promised and the server
    ///   should stop.
    public convenience init(path: String, policy: FsyncPolicy, snapshots: SnapshotPolicy = SnapshotPolicy(), store: Store,
                            onReplayed: (Change) -> Void = { _ in },
                            onFatal: @escaping @Sendable (PersistenceError) -> Void) throws {
        try self.init(path: path, policy: policy, snapshots: snapshots, store: store, onReplayed: onReplayed,
                      syncFile: WriteAheadLog.Options().syncFile, onFatal: onFatal)
    }

    /// As above, with the log's fsync replaced (tests hold it to keep
    /// answers waiting for durability).
    init(path: String, policy: FsyncPolicy, snapshots: SnapshotPolicy = SnapshotPolicy(), store: Store,
         onReplayed: (Change) -> Void, syncFile: @escaping @Sendable (Int32) -> Int32,
         onFatal: @escaping @Sendable (PersistenceError) -> Void) throws {
        let directory = try DataDirectory(path: path)
        self.directory = directory
        self.policy = policy
        self.snapshots = snapshots
        self.store = store
        let sink = StoreRestoreSink(store: store)
        recovery = try Recovery.run(directory: directory, sink: sink) { change in
            let applied = try store.replay(change) { current in
                try ReplayRule.decide(change, currentRevision: current) == .apply
            }
            if applied { onReplayed(change) }
        }
        // Recovery's decoding buffers are freed: hand the pages back to the OS.
        FreeMemory.giveBack()
        // What was recovered is on disk: durable from the start.
        let waiters = CommitStates(durable: recovery.lastLSN)
        self.waiters = waiters
        lastSnapshot = Mutex(nil)
        log = try WriteAheadLog(directory: path, nextLSN: recovery.nextLSN, options: .init(
            policy: policy,
            onDurable: { lsn in waiters.durable(lsn) },
            onFailure: onFatal,
            syncFile: syncFile))
    }

    /// The consumer for the store's commit fan-out: appends one commit's
    /// `changes` to the log as one record. Runs under the store's lock, in
    /// commit order.
    public func append(_ changes: [Change]) {
        // A failed log refuses appends and has already reported through
        // `onFatal`; under `.always` nothing acknowledged after it is
        // released, since the log never becomes durable past it.
        _ = try? log.append(changes)
    }

    /// The consumer for a batch of patches' commits: appends each change
    /// as its own record, all in one append (one hold of the log's lock).
    /// Under the store's lock, in commit order.
    public func appendEach(_ changes: [Change]) {
        _ = try? log.appendEach(changes)
    }

    /// Yes: a batch's records are appended together, so they are written
    /// and fsynced together, and the log never fails one commit alone.
    public var takesPatchBatches: Bool { true }

    /// Only under `--fsync always`: with `everysec` and `no` a crash may
    /// lose what was answered, as those policies say.
    public var answersWaitForDurability: Bool { policy == .always }

    public var lastPosition: UInt64 { log.lastLSN }

    /// Durable or pending: the log never fails a single commit (a failed
    /// log stops the server through `onFatal`, and nothing after it becomes
    /// durable).
    public func commitState(of position: UInt64) -> CommitState { waiters.state(of: position) }

    public func notify(waiter: UInt64, at position: UInt64, wake: @escaping @Sendable () -> Void) {
        waiters.wait(waiter: waiter, for: position, wake: wake)
    }

    public func cancelNotification(waiter: UInt64) { waiters.cancel(waiter: waiter) }

    /// Logs `event=recovered` and starts the compactor, which logs each
    /// snapshot (`event=snapshot`, `event=snapshot_failed`).
    public func startUpkeep(log serverLog: ServerLog) {
        logRecovery(to: serverLog)
        let started = Compactor(storage: self, policy: snapshots) { [self] result in
            logSnapshot(result, to: serverLog)
        }
        compactor.withLock { $0 = started }
    }

    /// The first log failure, if any.
    public var logFailure: PersistenceError? { log.failure }

    /// The newest snapshot this process wrote.
    public var latestSnapshot: SnapshotRecord? { lastSnapshot.withLock { $0 } }

    /// Writes a snapshot of the whole store while it keeps serving, then
    /// removes the snapshots and log segments it makes unnecessary.
    ///
    /// The store is held only to take a copy-on-write cut and read the
    /// log position that cut corresponds to; the snapshot is written from
    /// the cut, published (fsync, rename, directory fsync) once the log is
    /// durable up to that position, and only then is anything deleted.
    ///
    /// After the lists it holds the cut's memory of answered idempotency
    /// keys, in step with them, so that a restart from this snapshot (whose
    /// log before it may be gone) still answers retries of the patches it
    /// holds rather than applying them again.
    @discardableResult
    public func writeSnapshot(source: String = "checklistd") throws -> SnapshotRecord {
        let cutStart = DispatchTime.now().uptimeNanoseconds
        let (cut, lsn) = store.cut { log.lastLSN }
        let cutNanoseconds = DispatchTime.now().uptimeNanoseconds - cutStart
        let counts = cut.counts
        let header = SnapshotHeader(createdAt: Int64(Date().timeIntervalSince1970), source: source,
                                    listCount: UInt64(counts.lists), itemCount: UInt64(counts.items),
                                    startLSN: lsn, nextListID: cut.nextListID)
        let written = try directory.writeSnapshot(header: header, log: log, endLSN: { lsn }) { writer in
            try SnapshotExport.write(cut, namespace: nil, to: writer)
            try SnapshotExport.writeIdempotency(cut.idempotencyMemory, to: writer)
        }
        try directory.prune(keepSnapshots: 2, log: log)
        let record = SnapshotRecord(file: written.file, time: header.createdAt, items: UInt64(counts.items),
                                    compressedBytes: written.summary.compressedBytes,
                                    cutNanoseconds: cutNanoseconds,
                                    writeNanoseconds: DispatchTime.now().uptimeNanoseconds - cutStart - cutNanoseconds)
        lastSnapshot.withLock { $0 = record }
        return record
    }

    /// The log and snapshot figures STATS and /metrics report.
    public var status: DurabilityStatus {
        let snapshot = latestSnapshot
        return DurabilityStatus(
            log: .init(lastLSN: log.lastLSN, durableLSN: log.durableLSN, segments: UInt64(log.segments.count),
                       failed: log.failure != nil),
            snapshot: snapshot.map { .init(lsn: $0.file.startLSN, time: $0.time, bytes: $0.compressedBytes) })
    }

    /// Stops the compactor (a snapshot in progress finishes), flushes and
    /// closes the log and releases the directory's lock.
    public func close() throws {
        compactor.withLock { $0.take() }?.stop()
        try log.close()
        directory.close()
    }
}
