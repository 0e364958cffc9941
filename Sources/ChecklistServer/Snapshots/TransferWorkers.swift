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
    typealias Job = @Sendable () -> Void

    private struct State {
        var jobs: [Job] = []
        var threads: [NativeThread] = []
        var closed = false
    }

    /// Threads working on jobs, at most.
    let threadCount: Int
    private let lock = ConditionLock(State())

    init(threads: Int) {
        threadCount = max(1, threads)
    }

    /// Queues `job` for the next free worker. Returns false, and drops
    /// `job`, once `shutdown()` has been called.
    @discardableResult
    func submit(_ job: @escaping Job) -> Bool {
        let queued = lock.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.jobs.append(job)
            if state.threads.isEmpty {
                for n in 0..<threadCount {
                    state.threads.append(NativeThread.spawn(name: "checklist-xfer-\(n)") { [self] in work() })
                }
            }
            return true
        }
        if queued { lock.signal(.work) }
        return queued
    }

    /// Stops taking jobs, drops those still queued, waits for the running
    /// ones to return and joins the threads. Call it once the event loops
    /// have stopped (a job's answer can then no longer be delivered), never
    /// from a worker.
    func shutdown() {
        let (threads, dropped) = lock.withLock { state -> ([NativeThread], [Job]) in
            state.closed = true
            defer {
                state.threads = []
                state.jobs = []
            }
            return (state.threads, state.jobs)
        }
        lock.broadcast(.work)
        _ = dropped  // released here, outside the lock
        for thread in threads { thread.join() }
    }

    /// A worker thread: runs jobs until shut down.
    private func work() {
        while let job = nextJob() {
            job()
        }
    }

    private func nextJob() -> Job? {
        lock.withLock(waitingOn: .work, until: { $0.closed || !$0.jobs.isEmpty }) { state, _ -> Job? in
            guard !state.closed else { return nil }
            return state.jobs.removeFirst()
        }
    }
}
