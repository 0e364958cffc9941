import ChecklistThreads

/// The threads that do the heavy part of EXPORT and IMPORT requests
/// (compressing an export chunk, inflating and decoding an import chunk,
/// checking and applying an import at END) off the event loops, so that a
/// transfer does not stall the other connections of its loop for the tens
/// of milliseconds a chunk takes (Protocol/SPEC.md sections 6.16-6.17).
///
/// A fixed number of threads, started when the first job arrives, take
/// jobs in arrival order. So at most `threadCount` chunks are worked on at
/// once, server-wide, whatever the number of transfers; the others wait
/// their turn in the queue (and their connections with them). A connection
/// has at most one job queued or running, so the queue holds at most one
/// job per connection.
final class TransferWorkers: Sendable {
    typealias Job = WorkerPool.Job

    private let pool: WorkerPool

    /// Threads working on jobs, at most.
    var threadCount: Int { pool.threadCount }

    init(threads: Int) {
        pool = WorkerPool(threads: threads, name: "checklist-xfer")
    }

    /// Queues `job` for the next free worker. Returns false, and drops
    /// `job`, once `shutdown()` has been called.
    @discardableResult
    func submit(_ job: @escaping Job) -> Bool { pool.submit(job) }

    /// Stops taking jobs, drops those still queued, waits for the running
    /// ones to return and joins the threads. Call it once the event loops
    /// have stopped (a job's answer can then no longer be delivered), never
    /// from a worker.
    func shutdown() { pool.shutdown() }
}
