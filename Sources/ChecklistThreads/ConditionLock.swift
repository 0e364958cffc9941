#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pthread mutex with two condition variables guarding a value of type
/// `State`: the package's one way to wait, with a deadline, for shared state
/// to change, which `Synchronization.Mutex` cannot do. The write-ahead log's
/// flusher waits for records and its appenders for durability or buffer
/// space, compression and transfer workers wait for jobs, `Latch` for its
/// count, and the test harness for a child process's output.
///
/// Locking rule: `state` is read and written only by the closures given to
/// `withLock`, which run with the mutex held (while waiting, the mutex is
/// released and no closure runs).
package final class ConditionLock<State>: @unchecked Sendable {
    // @unchecked Sendable is safe: `state` is only touched with `mutex` held
    // (see the locking rule above), and pthread mutexes and condition
    // variables are made for use from many threads. They live in heap memory
    // allocated once, so their addresses never move.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let conditions: UnsafeMutablePointer<pthread_cond_t>
    private var state: State

    /// Which condition variable to wait on or signal.
    package enum Condition: Int {
        /// Work for the worker thread(s): records buffered, a sync asked
        /// for, a block to compress, closing.
        case work = 0
        /// Progress for the threads waiting on the workers: records durable,
        /// buffer space, a block compressed, a failure.
        case progress = 1
    }

    package init(_ initial: State) {
        state = initial
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        conditions = .allocate(capacity: 2)
        #if os(Linux)
        // Timed waits measure CLOCK_MONOTONIC (the deadline is absolute on it).
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(conditions, &attr)
        pthread_cond_init(conditions + 1, &attr)
        pthread_condattr_destroy(&attr)
        #else
        // Apple platforms have no pthread_condattr_setclock: timed waits
        // there are relative (`pthread_cond_timedwait_relative_np`).
        pthread_cond_init(conditions, nil)
        pthread_cond_init(conditions + 1, nil)
        #endif
    }

    deinit {
        pthread_cond_destroy(conditions)
        pthread_cond_destroy(conditions + 1)
        conditions.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the lock held.
    package func withLock<T, E: Error>(_ body: (inout State) throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// Takes the lock, waits on `condition` until `ready(state)` is true
    /// (checked before the first wait and after every wake-up) or until
    /// `deadline` passes; then runs
    /// `body` with the lock still held and whether `ready` was met.
    /// `ready` runs with the lock held and may update the state (e.g. to
    /// note that a thread is about to sleep).
    package func withLock<T, E: Error>(waitingOn condition: Condition, until ready: (inout State) -> Bool,
                               deadline: ContinuousClock.Instant,
                               _ body: (inout State, Bool) throws(E) -> T) throws(E) -> T {
        // Condition variables wait on CLOCK_MONOTONIC; the clock's instant is
        // turned into the same span from now on that clock.
        let left = max(.zero, deadline - .now)
        let (seconds, attoseconds) = left.components
        let nanoseconds = UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000)
        return try withLock(waitingOn: condition, until: ready, deadline: monotonicNanoseconds() &+ nanoseconds, body)
    }

    /// The same, with the deadline in CLOCK_MONOTONIC nanoseconds
    /// (`monotonicNanoseconds()`), or none to wait as long as it takes.
    package func withLock<T, E: Error>(waitingOn condition: Condition, until ready: (inout State) -> Bool,
                               deadline: UInt64? = nil,
                               _ body: (inout State, Bool) throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        var satisfied = ready(&state)
        while !satisfied {
            if let deadline {
                #if os(Linux)
                var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
                let rc = pthread_cond_timedwait(conditions + condition.rawValue, mutex, &ts)
                #else
                let now = monotonicNanoseconds()
                let span = deadline > now ? deadline - now : 0
                var ts = timespec(tv_sec: Int(span / 1_000_000_000), tv_nsec: Int(span % 1_000_000_000))
                let rc = span == 0 ? ETIMEDOUT : pthread_cond_timedwait_relative_np(conditions + condition.rawValue, mutex, &ts)
                #endif
                satisfied = ready(&state)
                if rc == ETIMEDOUT { break }
            } else {
                pthread_cond_wait(conditions + condition.rawValue, mutex)
                satisfied = ready(&state)
            }
        }
        return try body(&state, satisfied)
    }

    /// Wakes every thread waiting on `condition`. Cheap when none waits.
    package func broadcast(_ condition: Condition) {
        pthread_cond_broadcast(conditions + condition.rawValue)
    }

    /// Wakes one thread waiting on `condition`.
    package func signal(_ condition: Condition) {
        pthread_cond_signal(conditions + condition.rawValue)
    }
}

/// Nanoseconds of CLOCK_MONOTONIC.
package func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}
