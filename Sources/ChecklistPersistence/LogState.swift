import ChecklistWire
import Synchronization

/// The write-ahead log's shared state, guarded by `LogShared.lock`.
struct LogState {
    /// Encoded records appended but not yet taken by the flusher.
    var pending: WireWriter
    /// LSN of the first record in `pending` (meaningless when it is empty).
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

    /// Whether the flusher has something to do right now.
    func flusherHasWork(policy: FsyncPolicy, highWater: Int) -> Bool {
        if failure != nil || closing || syncRequested > durable { return true }
        switch policy {
        case .always, .no: return !pending.bytes.isEmpty
        case .everysec: return pending.count >= highWater
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
