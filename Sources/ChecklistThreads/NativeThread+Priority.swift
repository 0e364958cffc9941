#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

extension NativeThread {
    /// Gives the calling thread the lowest CPU priority, so that it runs on
    /// what request handling leaves of the cores: for background upkeep
    /// such as the compactor. On Linux the thread's nice value becomes 19
    /// (nice values are per thread there; threads it starts afterwards
    /// inherit it); on Apple platforms the thread is put in the background
    /// band. Returns false if the system refused.
    @discardableResult
    package static func lowerCurrentPriority() -> Bool {
        #if os(Linux)
        // PRIO_PROCESS with `who` 0 is the calling thread on Linux.
        return setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19) == 0
        #else
        return setpriority(PRIO_DARWIN_THREAD, 0, PRIO_DARWIN_BG) == 0
        #endif
    }

    /// Runs `body` on a new thread named `name`, at the lowest CPU priority
    /// when `lowered` (`lowerCurrentPriority`), and returns what it
    /// returned once that thread is done: work whose priority is decided
    /// case by case, which the caller's own (never raised again once
    /// lowered without privileges) must not decide.
    package static func runAndJoin<T: Sendable>(name: String, lowered: Bool, _ body: @escaping @Sendable () -> T) -> T {
        let result = Mutex<T?>(nil)
        spawn(name: name) {
            if lowered { lowerCurrentPriority() }
            let value = body()
            result.withLock { $0 = value }
        }.join()
        return result.withLock { $0.take()! }
    }
}
