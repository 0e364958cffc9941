import ChecklistSnapshot
import ChecklistThreads
import ChecklistWire
import Glibc

/// The write-ahead log's flusher: runs on its own thread, takes the buffered
/// records in one swap, writes them to the active segment, fsyncs as the
/// policy says, rotates segments, and publishes `durableLSN`. It alone owns
/// the segment file descriptor.
struct LogFlusher: Sendable {
    let shared: LogShared
    let directory: String
    let options: WriteAheadLog.Options
    /// Active segment: descriptor, first LSN, bytes written.
    var fd: Int32
    var segmentFirstLSN: LSN
    var segmentBytes: Int

    /// Runs until `close()` or the first error.
    mutating func run() {
        var batch = WireWriter(capacity: 64 * 1024)
        var scratch = WireWriter(capacity: 64 * 1024)
        var lastSync = monotonicNanoseconds()
        let interval = options.everysecIntervalNanoseconds
        let highWater = options.maxBufferedBytes / 2
        let policy = options.policy
        while true {
            // Wait for work; under .everysec also for the next tick when
            // something is written or buffered but not yet fsynced.
            let deadline: UInt64? = policy == .everysec
                ? shared.lock.withLock { s in
                    (!s.hasPending && s.written == s.durable) ? nil : lastSync + interval
                }
                : nil
            var slept = false
            shared.lock.withLock(waitingOn: .work, until: { s in
                // Sleeping without a deadline (.everysec with nothing
                // unsynced), the first append starts the clock.
                let ready = s.flusherHasWork(policy: policy, highWater: highWater)
                    || (deadline == nil && s.hasPending)
                s.flusherIdle = !ready
                s.flusherSleepsIndefinitely = !ready && deadline == nil
                if !ready { slept = true }
                return ready
            }, deadline: deadline) { s, _ in
                s.flusherIdle = false
                s.flusherSleepsIndefinitely = false
            }
            // Group commit: woken by the first append of a new batch, let the
            // other appenders that the last fsync released add theirs before
            // the batch is taken. One yield, on the flusher thread only.
            if slept && policy == .always { sched_yield() }
            var taken = (first: LSN(0), last: LSN(0), closing: false, syncTo: LSN(0), written: LSN(0))
            var deferred: [DeferredRecord] = []
            shared.lock.withLock { s in
                swap(&s.pending, &batch)
                swap(&s.deferred, &deferred)
                taken = (s.pendingFirstLSN, s.lastAppended, s.closing, s.syncRequested, s.written)
            }
            shared.lock.broadcast(.progress) // buffer space for blocked appenders
            do throws(PersistenceError) {
                var written = taken.written
                var synced: LSN? = nil
                if !batch.bytes.isEmpty || !deferred.isEmpty {
                    if segmentBytes > LogRecordFormat.segmentHeaderBytes
                        && segmentBytes + batch.count > options.segmentBytes {
                        synced = try rotate(to: taken.first, written: written)
                    }
                    try write(batch, deferred, scratch: &scratch)
                    written = taken.last
                    batch.reset()
                }
                let now = monotonicNanoseconds()
                let mustSync = taken.closing || taken.syncTo > (synced ?? shared.durable.load(ordering: .relaxed))
                    || (policy == .always && written > shared.durable.load(ordering: .relaxed))
                    || (policy == .everysec && now >= lastSync + interval)
                if mustSync && written > (synced ?? shared.durable.load(ordering: .relaxed)) {
                    try sync()
                    synced = written
                    lastSync = now
                } else if mustSync {
                    lastSync = now
                }
                publish(written: written, durable: synced)
                if taken.closing {
                    let drained = shared.lock.withLock { s in !s.hasPending }
                    if drained { break }
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

    var segmentPath: String { LogSegments.path(in: directory, firstLSN: segmentFirstLSN) }

    /// Writes `batch` to the active segment with the `deferred` records
    /// encoded in their places, in LSN order.
    private mutating func write(_ batch: WireWriter, _ deferred: [DeferredRecord],
                                scratch: inout WireWriter) throws(PersistenceError) {
        var from = 0
        for record in deferred {
            try POSIXFile.writeAll(fd, batch.bytes, from..<record.offset, path: segmentPath)
            // Streamed in pieces: a 10M-item import never becomes one buffer.
            var failure: PersistenceError?
            let (fd, path) = (fd, segmentPath)
            LogRecordFormat.streamRecord(lsn: record.lsn, durable: record.durable, changes: record.changes,
                                         scratch: &scratch) { piece in
                guard failure == nil else { return }
                do throws(PersistenceError) { try POSIXFile.writeAll(fd, piece, path: path) } catch { failure = error }
                segmentBytes += piece.count
            }
            if let failure { throw failure }
            from = record.offset
        }
        try POSIXFile.writeAll(fd, batch.bytes, from..<batch.count, path: segmentPath)
        segmentBytes += batch.count
    }

    private func sync() throws(PersistenceError) {
        let rc = options.syncFile(fd)
        if rc != 0 { throw POSIXFile.error("fsync", segmentPath, rc) }
    }

    /// Fsyncs and closes the active segment (so that every segment but the
    /// last is always complete) and starts a new one at `firstLSN`.
    /// Returns the LSN now durable.
    private mutating func rotate(to firstLSN: LSN, written: LSN) throws(PersistenceError) -> LSN {
        try sync()
        Glibc.close(fd)
        fd = -1
        fd = try LogSegments.create(in: directory, firstLSN: firstLSN, syncFile: options.syncFile)
        segmentFirstLSN = firstLSN
        segmentBytes = LogRecordFormat.segmentHeaderBytes
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
