import ChecklistLog
import ChecklistPersistence
import ChecklistSnapshot

// The log lines of the data directory: what recovery did, each snapshot.
extension DataDirectoryStorage {
    /// `level=info event=recovered ...`: what the start loaded, and how long it took.
    func logRecovery(to log: ServerLog) {
        let report = recovery
        log.info("recovered", ["snapshot": report.snapshot?.path ?? "none",
                               "lists": report.listsRestored, "items": report.itemsRestored,
                               "keys": report.keysRestored,
                               "logRecords": report.recordsReplayed, "segments": report.segmentsScanned,
                               "tornTailCut": report.tornTail != nil, "nextLSN": report.nextLSN,
                               "snapshotMs": Double(report.snapshotNanoseconds / 1000) / 1000,
                               "replayMs": Double(report.replayNanoseconds / 1000) / 1000,
                               "fsync": policy.rawValue])
    }

    /// `event=snapshot` (info) or `event=snapshot_failed` (error).
    func logSnapshot(_ result: Result<SnapshotRecord, any Error>, to log: ServerLog) {
        switch result {
        case .success(let record):
            log.info("snapshot", ["file": record.file.path, "lsn": record.file.startLSN, "items": record.items,
                                  "bytes": record.compressedBytes,
                                  "cutMs": Double(record.cutNanoseconds / 1000) / 1000,
                                  "writeMs": Double(record.writeNanoseconds / 1000) / 1000, "overdue": record.overdue])
        case .failure(let error):
            log.error("snapshot_failed", ["error": "\(error)"])
        }
    }
}
