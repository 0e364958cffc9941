import ChecklistModel
import ChecklistSnapshot
import ChecklistThreads
import ChecklistWire
import Synchronization

/// The write-ahead log's shared state, guarded by `LogShared.lock`.
struct LogState {
    /// Encoded records appended but not yet taken by the flusher.
    var pending: WireWriter
    /// Records appended but left for the flusher to encode (imports: the
    /// store's lock is not held while a 10M-item list is encoded), in LSN
    /// order, each placed at its offset in `pending`.
    var deferred: [DeferredRecord] = []
    /// LSN of the first record in `pending` or `deferred` (meaningless when
    /// both are empty).
    var pendingFirstLSN: LSN = 0
    /// The last LSN appended.
    var lastAppended: LSN
    /// Records up to here were handed to write(2).
    var written: LSN
    /// Records up to here were fsynced.
    var durable: LSN
    /// `waitDurable` wants an fsync up to this LSN.
    var syncRequested: LSN = 0
    /// First LSNs of the segment files, ascending; the last is the active one.
    var segments: [LSN]
    /// The flusher is waiting for work (appenders may need to wake it).
    var flusherIdle = false
    /// The flusher waits without a deadline (`.everysec` while nothing is
    /// buffered): the next append must wake it to start the clock.
    var flusherSleepsIndefinitely = false
    /// `close()` was called: the flusher writes what is left and stops.
    var closing = false
    /// The flusher has stopped.
    var flusherExited = false
    /// The first write or fsync error; the log takes no more records.
    var failure: PersistenceError?

    /// Whether records wait for the flusher.
    var hasPending: Bool { !pending.bytes.isEmpty || !deferred.isEmpty }

    /// Whether the flusher has something to do right now.
    func flusherHasWork(policy: FsyncPolicy, writeBehind: Int) -> Bool {
        if failure != nil || closing || syncRequested > durable { return true }
        switch policy {
        case .always, .no: return hasPending
        case .everysec: return pending.count >= writeBehind
        }
    }
}

/// A record whose encoding waits for the flusher: its changes hold the
/// store's immutable copy-on-write rows, so reading them later, on another
/// thread, sees exactly what was committed.
struct DeferredRecord: Sendable {
    /// Where the record goes in the pending bytes (it precedes the bytes
    /// from here on).
    var offset: Int
    var lsn: LSN
    /// The durable LSN when it was appended (for its `lag`).
    var durable: LSN
    var changes: [Change]

    /// Whether `changes` are worth encoding off the store's lock: an import
    /// carries whole lists.
    static func wanted(for changes: [Change]) -> Bool {
        changes.contains { change in
            if case .listImported = change.kind { return true }
            return false
        }
    }
}

/// What the `WriteAheadLog` and its flusher thread share.
final class LogShared: Sendable {
    let lock: ConditionLock<LogState>
    /// Mirrors `LogState.durable` for lock-free reads.
    let durable: Atomic<UInt64>
    /// Mirrors `LogState.lastAppended` for lock-free reads.
    let lastAppended: Atomic<UInt64>

    init(state: LogState) {
        lock = ConditionLock(state)
        durable = Atomic(state.durable)
        lastAppended = Atomic(state.lastAppended)
    }
}
