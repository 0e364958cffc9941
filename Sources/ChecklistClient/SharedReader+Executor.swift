#if canImport(Glibc)
import Glibc
#endif

/// The shared reader thread as a `TaskExecutor`: a task that prefers it
/// (`withTaskExecutorPreference`, `addTask(executorPreference:)`) runs its
/// nonisolated code on the reader thread, between reads. An answer read
/// there resumes the waiting task on the same thread, after the reads of
/// that wake-up: one thread wakes per round of answers instead of the
/// reader and then a pool thread, as a hand-written epoll client does.
extension SharedReader: TaskExecutor {
    /// The jobs waiting to run on the reader thread, guarded by `jobs`.
    struct JobQueue {
        var waiting: [UnownedJob] = []
        /// True once `wakeFD` was signalled for jobs not yet taken.
        var wakeSignalled = false
    }

    /// Queues `job` to run on the reader thread; from another thread, wakes
    /// the reader (once per batch of jobs) if it waits in `epoll_wait`.
    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let onReader = pthread_equal(pthread_self(), pthread_t(threadID.load(ordering: .acquiring))) != 0
        let signal = jobs.withLock { queue in
            queue.waiting.append(unowned)
            if onReader || queue.wakeSignalled { return false }
            queue.wakeSignalled = true
            return true
        }
        if signal {
            var one: UInt64 = 1
            while Glibc.write(wakeFD, &one, 8) < 0 && errno == EINTR {}
        }
    }

    /// Runs the jobs queued so far (not those they enqueue: those wait for
    /// the next turn, after the next reads). Returns whether jobs are left.
    /// `running` is the reader's spare array, handed back empty.
    func runJobs(_ running: inout [UnownedJob]) -> Bool {
        jobs.withLock { queue in
            swap(&queue.waiting, &running)
            queue.wakeSignalled = false
        }
        let executor = asUnownedTaskExecutor()
        for job in running { job.runSynchronously(on: executor) }
        running.removeAll(keepingCapacity: true)
        return jobs.withLock { !$0.waiting.isEmpty }
    }
}
