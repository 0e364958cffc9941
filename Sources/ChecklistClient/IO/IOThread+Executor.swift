/// The I/O thread as a `TaskExecutor`: a task that prefers it
/// (`withTaskExecutorPreference`, `addTask(executorPreference:)`) runs its
/// nonisolated code on the I/O thread, between reads. An answer read there
/// resumes the waiting task on the same thread, after the reads of that
/// wake-up, and the requests it sends are written in the same round: one
/// thread wakes per round of answers instead of the I/O thread and then a
/// pool thread.
extension IOThread: TaskExecutor {
    /// Queues `job` to run on the I/O thread; from another thread, wakes it
    /// (once per batch of work) if it waits. Once the thread has failed,
    /// the job runs on the global concurrent executor instead.
    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let onThread = isCurrent
        let (signal, failed) = inbox.withLock { inbox -> (Bool, Bool) in
            if inbox.failure != nil { return (false, true) }
            inbox.jobs.append(unowned)
            if onThread || inbox.wakeSignalled { return (false, false) }
            inbox.wakeSignalled = true
            return (true, false)
        }
        if failed {
            globalConcurrentExecutor.enqueue(ExecutorJob(unowned))
            return
        }
        if signal { waker.wake() }
    }

    /// Runs the jobs taken from the inbox (not those they enqueue: those
    /// wait for the next round, after the next reads). `running` is handed
    /// back empty.
    func runJobs(_ running: inout [UnownedJob]) {
        guard !running.isEmpty else { return }
        let executor = asUnownedTaskExecutor()
        for job in running { job.runSynchronously(on: executor) }
        running.removeAll(keepingCapacity: true)
    }
}
