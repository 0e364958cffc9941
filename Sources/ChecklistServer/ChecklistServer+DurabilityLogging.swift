import ChecklistPersistence
import ChecklistSnapshot

// The log lines of the durable side: what recovery did, each snapshot.
extension ChecklistServer {
    /// `level=info event=recovered ...`: what the start loaded, and how long it took.
    public func logRecovery(_ report: RecoveryReport, policy: FsyncPolicy) {
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
    public func logSnapshot(_ result: Result<ServerStorage.SnapshotRecord, any Error>) {
        switch result {
        case .success(let record):
            log.info("snapshot", ["file": record.file.path, "lsn": record.file.startLSN, "items": record.items,
                                  "bytes": record.compressedBytes,
                                  "cutMs": Double(record.cutNanoseconds / 1000) / 1000,
                                  "writeMs": Double(record.writeNanoseconds / 1000) / 1000])
        case .failure(let error):
            log.error("snapshot_failed", ["error": "\(error)"])
        }
    }
}
