import ChecklistSnapshot
import ChecklistThreads
import ChecklistWire
import Glibc

/// The write-ahead log's flusher: runs on its own thread, takes the buffered
/// records in one swap, writes them to the active segment, fsyncs as the
/// policy says, rotates segments, and publishes `durableLSN`. It alone owns
/// the segment file descriptor, and keeps zeros written ahead of the records
/// when asked to (`Options.preallocationBytes`).
struct LogFlusher: Sendable {
    let shared: LogShared
    let directory: String
    let options: WriteAheadLog.Options
    /// Active segment: descriptor, first LSN, bytes written.
    var fd: Int32
    var segmentFirstLSN: LSN
    var segmentBytes: Int
    /// Where the active segment's zeros laid ahead of the records end (at
    /// most `segmentBytes` when none are).
    var preallocatedEnd = 0

    /// What the flusher took from the shared state in one swap.
    private struct TakenBatch {
        /// The LSNs of the first and last record in the batch.
        var first = LSN(0), last = LSN(0)
        var closing = false
        /// An LSN someone asked to be made durable (`sync`).
        var syncTo = LSN(0)
        /// The last LSN already written before this batch.
        var written = LSN(0)
    }

    /// Runs until `close()` or the first error.
    mutating func run() {
        var batch = WireWriter(capacity: 64 * 1024)
        var scratch = WireWriter(capacity: 64 * 1024)
        var lastSync = monotonicNanoseconds()
        while true {
            let slept = waitForWork(lastSync: lastSync)
            // Group commit: woken by the first append of a new batch, let the
            // other appenders that the last fsync released add theirs before
            // the batch is taken. One yield, on the flusher thread only.
            if slept && options.policy == .always { sched_yield() }
            var deferred: [DeferredRecord] = []
            let taken = takeBatch(&batch, &deferred)
            do throws(PersistenceError) {
                let written = try writeBatch(&batch, deferred, taken, scratch: &scratch)
                try syncAsThePolicySays(written: written.lsn, synced: written.syncedByRotation, taken, lastSync: &lastSync)
                if taken.closing && shared.lock.withLock({ s in !s.hasPending }) {
                    // Closed, the last segment is complete: no zeros after its records.
                    if try trimPreallocation() { try sync() }
                    break
                }
            } catch {
                fail(error)
                break
            }
        }
        Glibc.close(fd)
        shared.lock.withLock { s in s.flusherExited = true }
        shared.lock.broadcast(.progress)
    }

    /// Waits for work; under `.everysec` also for the next tick when
    /// something is written or buffered but not yet fsynced. Returns
    /// whether it had to sleep.
    private func waitForWork(lastSync: UInt64) -> Bool {
        let policy = options.policy
        let writeBehind = options.writeBehind
        let deadline: UInt64? = policy == .everysec
            ? shared.lock.withLock { s in
                (!s.hasPending && s.written == s.durable) ? nil : lastSync + options.everysecIntervalNanoseconds
            }
            : nil
        var slept = false
        shared.lock.withLock(waitingOn: .work, until: { s in
            // Sleeping without a deadline (.everysec with nothing
            // unsynced), the first append starts the clock.
            let ready = s.flusherHasWork(policy: policy, writeBehind: writeBehind)
                || (deadline == nil && s.hasPending)
            s.flusherIdle = !ready
            s.flusherSleepsIndefinitely = !ready && deadline == nil
            if !ready { slept = true }
            return ready
        }, deadline: deadline) { s, _ in
            s.flusherIdle = false
            s.flusherSleepsIndefinitely = false
        }
        return slept
    }

    /// Swaps the buffered records (and the deferred large ones) out of the
    /// shared state, then wakes appenders blocked on buffer space.
    private func takeBatch(_ batch: inout WireWriter, _ deferred: inout [DeferredRecord]) -> TakenBatch {
        var taken = TakenBatch()
        shared.lock.withLock { s in
            swap(&s.pending, &batch)
            swap(&s.deferred, &deferred)
            taken = TakenBatch(first: s.pendingFirstLSN, last: s.lastAppended, closing: s.closing,
                               syncTo: s.syncRequested, written: s.written)
        }
        shared.lock.broadcast(.progress)
        return taken
    }

    /// Writes the batch (rotating to a new segment first when it would
    /// overflow the active one) and empties it. Returns the last LSN written
    /// and, after a rotation, the LSN the rotation made durable.
    private mutating func writeBatch(_ batch: inout WireWriter, _ deferred: [DeferredRecord], _ taken: TakenBatch,
                                     scratch: inout WireWriter) throws(PersistenceError) -> (lsn: LSN, syncedByRotation: LSN?) {
        guard !batch.bytes.isEmpty || !deferred.isEmpty else { return (taken.written, nil) }
        var synced: LSN?
        if segmentBytes > LogRecordFormat.segmentHeaderBytes && segmentBytes + batch.count > options.segmentBytes {
            synced = try rotate(to: taken.first, written: taken.written)
        }
        try preallocate(toHold: batch.count)
        try write(batch, deferred, scratch: &scratch)
        preallocatedEnd = max(preallocatedEnd, segmentBytes)
        Self.empty(&batch)
        return (taken.last, synced)
    }

    /// A batch buffer that grew past this while appenders outran the disk is
    /// given back when emptied: the two buffers the flusher swaps would
    /// otherwise each keep up to `maxBufferedBytes` (16 MiB by default) for
    /// good after one bulk load.
    static let keptBufferBytes = 1 << 20

    /// Empties `batch`, keeping its storage unless it is over `keptBufferBytes`.
    static func empty(_ batch: inout WireWriter) {
        if batch.bytes.capacity > keptBufferBytes {
            batch = WireWriter(capacity: 64 * 1024)
        } else {
            batch.reset()
        }
    }

    /// Fsyncs when closing, when asked to, under `.always` when anything is
    /// unsynced, under `.everysec` once the interval has passed; then
    /// publishes what is written and durable.
    private func syncAsThePolicySays(written: LSN, synced: LSN?, _ taken: TakenBatch,
                                     lastSync: inout UInt64) throws(PersistenceError) {
        var synced = synced
        let policy = options.policy
        let now = monotonicNanoseconds()
        let durable = synced ?? shared.durable.load(ordering: .relaxed)
        let mustSync = taken.closing || taken.syncTo > durable
            || (policy == .always && written > shared.durable.load(ordering: .relaxed))
            || (policy == .everysec && now >= lastSync + options.everysecIntervalNanoseconds)
        if mustSync && written > (synced ?? shared.durable.load(ordering: .relaxed)) {
            try sync()
            synced = written
            lastSync = now
        } else if mustSync {
            lastSync = now
        }
        publish(written: written, durable: synced)
    }

    var segmentPath: String { LogSegments.path(in: directory, firstLSN: segmentFirstLSN) }

    /// Writes `batch` to the active segment with the `deferred` records
    /// encoded in their places, in LSN order.
    private mutating func write(_ batch: WireWriter, _ deferred: [DeferredRecord],
                                scratch: inout WireWriter) throws(PersistenceError) {
        var from = 0
        for record in deferred {
            try DirectoryFiles.writeAll(fd, batch.bytes, from..<record.offset, path: segmentPath)
            // Streamed in pieces: a 10M-item import never becomes one buffer.
            var failure: PersistenceError?
            let (fd, path) = (fd, segmentPath)
            LogRecordFormat.streamRecord(lsn: record.lsn, durable: record.durable, changes: record.changes,
                                         scratch: &scratch) { piece in
                guard failure == nil else { return }
                do throws(PersistenceError) { try DirectoryFiles.writeAll(fd, piece, path: path) } catch { failure = error }
                segmentBytes += piece.count
            }
            if let failure { throw failure }
            from = record.offset
        }
        try DirectoryFiles.writeAll(fd, batch.bytes, from..<batch.count, path: segmentPath)
        segmentBytes += batch.count
    }

    /// Makes sure zeros lie at least half of `preallocationBytes` past the
    /// `count` bytes about to be written, laying up to `preallocationBytes`
    /// more (not past the rotation size, unless the write itself goes
    /// there). The next fsync makes them durable with the records.
    private mutating func preallocate(toHold count: Int) throws(PersistenceError) {
        let ahead = options.preallocationBytes
        let end = segmentBytes + count
        guard ahead > 0, preallocatedEnd < end + ahead / 2 else { return }
        let target = max(end, min(end + ahead, options.segmentBytes))
        let from = max(preallocatedEnd, segmentBytes)
        guard target > from else { return }
        try DirectoryFiles.writeZeros(fd, at: from, count: target - from, path: segmentPath)
        preallocatedEnd = target
    }

    /// Cuts the zeros after the active segment's records; returns whether
    /// there were any (the cut is durable after the next fsync).
    private mutating func trimPreallocation() throws(PersistenceError) -> Bool {
        guard preallocatedEnd > segmentBytes else { return false }
        try DirectoryFiles.truncate(fd, to: segmentBytes, path: segmentPath)
        preallocatedEnd = segmentBytes
        return true
    }

    private func sync() throws(PersistenceError) {
        try LogSegments.sync(fd, path: segmentPath, with: options.syncFile)
    }

    /// Cuts the active segment's zeros, fsyncs and closes it (so that every
    /// segment but the last is always complete) and starts a new one at
    /// `firstLSN`.
    /// Returns the LSN now durable.
    private mutating func rotate(to firstLSN: LSN, written: LSN) throws(PersistenceError) -> LSN {
        _ = try trimPreallocation()
        try sync()
        Glibc.close(fd)
        fd = -1
        fd = try LogSegments.create(in: directory, firstLSN: firstLSN, syncFile: options.syncFile)
        segmentFirstLSN = firstLSN
        segmentBytes = LogRecordFormat.segmentHeaderBytes
        preallocatedEnd = segmentBytes
        shared.lock.withLock { s in s.segments.append(firstLSN) }
        return written
    }

    /// Publishes progress, wakes waiters and reports a new durable LSN.
    private func publish(written: LSN, durable: LSN?) {
        let advanced: Bool = shared.lock.withLock { s in
            s.written = max(s.written, written)
            guard let durable, durable > s.durable else { return false }
            s.durable = durable
            shared.durable.store(durable, ordering: .releasing)
            return true
        }
        shared.lock.broadcast(.progress)
        if advanced, let durable, let onDurable = options.onDurable { onDurable(durable) }
    }

    /// Reports the failure (first to `onFailure`, so the callback has run
    /// before any waiter learns of it), then stops appends and waiters.
    private func fail(_ error: PersistenceError) {
        options.onFailure?(error)
        shared.lock.withLock { s in s.failure = error }
        shared.lock.broadcast(.progress)
    }
}
