import ChecklistSnapshot
import ChecklistThreads
import Synchronization

/// Writes a snapshot in the background whenever the log has grown as far
/// as the `SnapshotPolicy` says since the last one, so recovery stays short
/// and old log segments go. Requests keep being served meanwhile (see
/// `DataDirectoryStorage.writeSnapshot`), and come first: a snapshot is
/// written on a thread of its own at the lowest CPU priority, its
/// compression threads too (`NativeThread.lowerCurrentPriority`), on what
/// serving leaves of the cores, unless it is overdue
/// (`SnapshotSchedule.isOverdue`: serving left it no room for long), then
/// at the server's own priority, so that the log and the recovery it
/// costs stay bounded. Its tick also gives the C heap's
/// free memory back once large PATCH batches added up (`FreeMemory.giveBackIfDue`).
public final class Compactor: Sendable {
    private let thread: Mutex<NativeThread?> = Mutex(nil)
    /// Opened by `stop()`.
    private let stopLatch = Latch(count: 1)

    /// Starts checking once a second.
    ///
    /// - Parameter report: told about every snapshot written or failed.
    public init(storage: DataDirectoryStorage, policy: SnapshotPolicy,
                report: @escaping @Sendable (Result<DataDirectoryStorage.SnapshotRecord, any Error>) -> Void) {
        let stopLatch = self.stopLatch
        thread.withLock {
            $0 = NativeThread.spawn(name: "checklist-compactor") {
                var schedule = SnapshotSchedule(policy: policy, coveredLSN: storage.recovery.snapshot?.startLSN ?? 0,
                                                items: storage.recovery.itemsRestored)
                while !stopLatch.wait(until: .now.advanced(by: .seconds(1))) {
                    FreeMemory.giveBackIfDue()
                    let lastLSN = storage.log.lastLSN
                    guard schedule.isDue(lastLSN: lastLSN) else { continue }
                    let overdue = schedule.isOverdue(lastLSN: lastLSN)
                    let written = NativeThread.runAndJoin(name: "checklist-snapshot", lowered: !overdue) {
                        Result { try storage.writeSnapshot() }
                    }
                    switch written {
                    case .success(var record):
                        record.overdue = overdue
                        schedule.wrote(startLSN: record.file.startLSN, items: record.items)
                        report(.success(record))
                    case .failure(let error):
                        report(.failure(error))
                        schedule.failed(lastLSN: storage.log.lastLSN)
                    }
                }
            }
        }
    }

    /// Stops checking and waits for a snapshot in progress to finish.
    public func stop() {
        stopLatch.countDown()
        thread.withLock { $0.take() }?.join()
    }
}
