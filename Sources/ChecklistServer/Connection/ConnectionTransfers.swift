import ChecklistWire

/// A snapshot request whose answer is with a transfer worker.
struct PendingTransfer {
    let work: SnapshotWork
    let header: FrameHeader
    /// When the request came in (`EventLoop.elapsed`).
    let began: Duration
    /// The log's end before the request (`--fsync always`).
    let logBefore: UInt64?
}

/// The snapshot transfers of one connection, as its handler sees them:
/// where the heavy part of EXPORT and IMPORT chunks runs (`TransferWorkers`,
/// not the loop), the request whose answer is awaited from there, and what
/// waits on it. Meanwhile the connection reads nothing, so its answers keep
/// request order, while the loop serves its other connections.
///
/// Owned by the connection's event-loop thread.
struct ConnectionTransfers {
    private let workers: TransferWorkers
    /// The request whose answer a worker is making.
    var awaited: PendingTransfer?
    /// Set when the connection closes: a job not started yet is skipped.
    let closed = CancellationFlag()
    /// When the last answer made off the loop was written: the idle timeout
    /// counts from then too (the client could send nothing while it waited).
    var answeredAt: ContinuousClock.Instant?

    init(workers: TransferWorkers) {
        self.workers = workers
    }

    /// Runs `work` on a worker and hands its outcome to `deliver` there,
    /// unless the connection closed first. False when the workers take no
    /// more work (the server is stopping).
    func submit(_ work: SnapshotWork, deliver: @escaping @Sendable (SnapshotWork.Outcome) -> Void) -> Bool {
        let closed = self.closed
        let run = work.run
        return workers.submit {
            guard !closed.isSet else { return }
            deliver(run())
        }
    }
}
