import ChecklistModel
import ChecklistSnapshot
import ChecklistThreads

/// What recovery found and did.
public struct RecoveryReport: Hashable, Sendable {
    /// The snapshot loaded, if any.
    public var snapshot: DataDirectory.SnapshotFile?
    public var snapshotHeader: SnapshotHeader?
    public var snapshotTrailer: SnapshotTrailer?
    public var listsRestored: UInt64 = 0
    public var itemsRestored: UInt64 = 0
    /// Remembered idempotency keys (answers) the snapshot handed over.
    public var keysRestored: UInt64 = 0
    /// Log segments read.
    public var segmentsScanned = 0
    /// Log records after the snapshot whose changes went to replay.
    public var recordsReplayed: UInt64 = 0
    /// The damaged end of the last segment that was cut off, if any.
    public var tornTail: TornTail?
    /// The highest LSN the log or the snapshot's `startLSN` accounts for.
    public var lastLSN: LSN = 0
    /// Pass this to `WriteAheadLog(directory:nextLSN:)`.
    public var nextLSN: LSN { lastLSN + 1 }
    /// Time spent loading the snapshot and replaying the log.
    public var snapshotNanoseconds: UInt64 = 0
    public var replayNanoseconds: UInt64 = 0
}

/// Start-up recovery (Protocol/SNAPSHOT.md section 8): load the newest
/// snapshot, then replay the log after it.
public enum Recovery {
    /// Streams the newest snapshot of `directory` into `sink` (lists, items,
    /// then its remembered idempotency keys; rows built on the inflating
    /// threads when the sink offers `rowBuilding`), then hands every log record
    /// after the snapshot's `startLSN`, in LSN order, to `replay` (which
    /// applies `ReplayRule`): so the keys of replayed changes go on top of
    /// the snapshot's.
    ///
    /// - A torn tail of the last segment (a crash mid-write) is cut off, the
    ///   file truncated and fsynced, and reported in `tornTail`.
    /// - A damaged record anywhere else, a damaged snapshot, or a log that
    ///   misses records throws a `PersistenceError` (`CORRUPT_LOG`,
    ///   `LOG_GAP`; a snapshot's `CORRUPT_SNAPSHOT`, ... as `.snapshot`)
    ///   naming file and offset: nothing is loaded silently. The sink's and
    ///   `replay`'s own errors come out as they are. The sink may then hold
    ///   a partial state; discard it.
    public static func run(directory: DataDirectory, limits: SnapshotLimits = .default,
                           sink: some SnapshotRestoreSink,
                           replay: (Change) throws -> Void) throws -> RecoveryReport {
        var report = RecoveryReport()
        try directory.removeTemporaryFiles()
        var began = monotonicNanoseconds()
        var startLSN: LSN = 0
        if let newest = try directory.snapshots().last {
            let (reader, trailer, counting) = try PersistenceError.wrappingSnapshotErrors {
                let reader = try SnapshotReader(path: newest.path, limits: limits, rowBuilding: sink.rowBuilding)
                guard reader.header.startLSN == newest.startLSN else {
                    throw SnapshotError(.corruptSnapshot, "header says start LSN \(reader.header.startLSN), the file name says \(newest.startLSN)",
                                        file: newest.path, offset: 0)
                }
                let counting = CountingSink(inner: sink)
                return (reader, try reader.readAll(into: counting), counting)
            }
            report.snapshot = newest
            report.snapshotHeader = reader.header
            report.snapshotTrailer = trailer
            // The reader checked the trailer's counts against the records.
            report.listsRestored = trailer.listCount
            report.itemsRestored = trailer.itemCount
            report.keysRestored = counting.keys
            startLSN = newest.startLSN
            report.lastLSN = startLSN
        }
        report.snapshotNanoseconds = monotonicNanoseconds() - began
        began = monotonicNanoseconds()
        try replayLog(in: directory.path, after: startLSN, report: &report, replay: replay)
        report.replayNanoseconds = monotonicNanoseconds() - began
        // A snapshot is published only once the log is durable up to its
        // endLSN: a log ending before it lost fsynced records, and the
        // snapshot's lists may hold changes the others lack.
        if let snapshot = report.snapshot, let end = report.snapshotTrailer?.endLSN, end > report.lastLSN {
            throw PersistenceError(.logGap, "the log ends at LSN \(report.lastLSN) but the snapshot holds changes up to LSN \(end): fsynced log records were lost",
                                   file: snapshot.path)
        }
        return report
    }

    /// Scans the segments in order and replays records after `startLSN`.
    static func replayLog(in directory: String, after startLSN: LSN, report: inout RecoveryReport,
                          replay: (Change) throws -> Void) throws {
        let segments = try LogSegments.list(in: directory)
        // The LSN the next record must have; records up to startLSN may be
        // missing (the snapshot holds them).
        var expected = startLSN + 1
        var lastSeen: LSN? = nil
        var replayed: UInt64 = 0
        var lastReplayed: LSN = 0
        for (index, first) in segments.enumerated() {
            let isLast = index == segments.count - 1
            let path = LogSegments.path(in: directory, firstLSN: first)
            // Segments whose records all precede the snapshot are not needed.
            if !isLast && segments[index + 1] <= startLSN + 1 { continue }
            if first > expected {
                throw PersistenceError(.logGap, "log misses records \(expected)...\(first - 1): segment starts at LSN \(first)", file: path, offset: 0)
            }
            if let lastSeen, first <= lastSeen {
                throw PersistenceError(.corruptLog, "segment starts at LSN \(first), but the previous one ends at LSN \(lastSeen)", file: path, offset: 0)
            }
            // Mapped only while scanning: unmapped before any truncation.
            let result = try MappedFile(path: path, failure: PersistenceError.self).withBytes { bytes in
                try LogSegmentScanner.scan(bytes, file: path, nameLSN: first, isLast: isLast, skipThrough: startLSN) { lsn, change in
                    try replay(change)
                    // The changes of a group share their record's LSN.
                    if lsn != lastReplayed { replayed += 1 }
                    lastReplayed = lsn
                }
            }
            report.segmentsScanned += 1
            if let last = result.lastLSN {
                lastSeen = last
                expected = max(expected, last + 1)
                report.lastLSN = max(report.lastLSN, last)
            }
            if let torn = result.tornTail {
                report.tornTail = torn
                if torn.offset == 0 {
                    try DirectoryFiles.unlink(path)
                    try DirectoryFiles.fsyncDirectory(directory)
                } else {
                    try DirectoryFiles.truncate(path, to: torn.offset)
                }
            }
        }
        report.recordsReplayed = replayed
    }
}

/// Counts the idempotency keys that pass to the real sink (lists and
/// items are counted by the trailer, which the reader checks), and passes
/// rows on untouched: nothing per row.
private final class CountingSink<Inner: SnapshotRestoreSink>: SnapshotRestoreSink {
    let inner: Inner
    var keys: UInt64 = 0
    init(inner: Inner) { self.inner = inner }
    func restoreHeader(_ header: SnapshotHeader) throws { try inner.restoreHeader(header) }
    func restoreList(_ list: SnapshotList) throws { try inner.restoreList(list) }
    func restoreItem(_ item: Item, in list: ListID) throws { try inner.restoreItem(item, in: list) }
    func restoreItem(_ row: ImportedItems.View, in list: ListID) throws { try inner.restoreItem(row, in: list) }
    var rowBuilding: SnapshotRowBuilding? { inner.rowBuilding }
    func restoreRows(_ rows: any Sendable, in list: ListID) throws { try inner.restoreRows(rows, in: list) }
    func restoreIdempotency(_ client: SnapshotIdempotency) throws {
        keys += UInt64(client.answers.count)
        try inner.restoreIdempotency(client)
    }
    func restoreEnd(_ trailer: SnapshotTrailer) throws { try inner.restoreEnd(trailer) }
}
