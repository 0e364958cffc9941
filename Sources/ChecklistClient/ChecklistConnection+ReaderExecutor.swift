extension ChecklistConnection {
    /// The thread that reads and writes every connection of the process
    /// (`IOThread`), as a `TaskExecutor`, or nil if it could not be started
    /// (then no connection can be opened either).
    ///
    /// A task that prefers it runs on that thread between reads, so the
    /// answer to each request resumes the task where it was read, without
    /// waking a thread of the cooperative pool. For request loops on many
    /// connections (a load generator, a page prefetcher) this halves the
    /// thread wake-ups per answer:
    ///
    /// ```swift
    /// try await withTaskExecutorPreference(ChecklistConnection.readerExecutor) {
    ///     let page = try await connection.pageBytes(list, limit: 100)
    ///     ...
    /// }
    /// ```
    ///
    /// Everything run there delays the reading of every connection: keep
    /// the work between requests short and never block (no blocking calls,
    /// no long computation). Requests sent from there are written in the
    /// same round, after the jobs run. Actor-isolated
    /// code still runs on its actor. nil is a valid preference (no
    /// preference), so the value can be passed on as it is.
    public static var readerExecutor: (any TaskExecutor)? { try? IOThread.shared() }
}
