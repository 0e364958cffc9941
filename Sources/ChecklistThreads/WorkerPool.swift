/// A fixed number of named threads, started when the first job arrives,
/// that take jobs in arrival order: at most `threadCount` jobs run at once,
/// whatever the number of submitters. The one queue behind the server's
/// transfer workers and the IMPORT stream's inflate workers.
package final class WorkerPool: Sendable {
    package typealias Job = @Sendable () -> Void

    private struct State {
        var jobs: [Job] = []
        var threads: [NativeThread] = []
        var closed = false
    }

    /// Threads working on jobs, at most.
    package let threadCount: Int
    /// The threads' names are `name-0`, `name-1`, ...
    private let name: String
    private let lock = ConditionLock(State())

    /// `threads` workers (at least 1), started with the first job.
    package init(threads: Int, name: String) {
        threadCount = max(1, threads)
        self.name = name
    }

    /// Queues `job` for the next free worker. Returns false, and drops
    /// `job`, once `shutdown()` has been called.
    @discardableResult
    package func submit(_ job: @escaping Job) -> Bool {
        let queued = lock.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.jobs.append(job)
            if state.threads.isEmpty {
                for n in 0..<threadCount {
                    state.threads.append(NativeThread.spawn(name: "\(name)-\(n)") { [self] in work() })
                }
            }
            return true
        }
        if queued { lock.signal(.work) }
        return queued
    }

    /// Stops taking jobs, drops those still queued (released outside the
    /// lock), waits for the running ones to return and joins the threads.
    /// Never from a worker.
    package func shutdown() {
        let (threads, dropped) = lock.withLock { state -> ([NativeThread], [Job]) in
            state.closed = true
            defer {
                state.threads = []
                state.jobs = []
            }
            return (state.threads, state.jobs)
        }
        lock.broadcast(.work)
        _ = dropped
        for thread in threads { thread.join() }
    }

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
