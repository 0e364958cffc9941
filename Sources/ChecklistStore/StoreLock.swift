#if canImport(Glibc)
import Glibc
#endif

/// The store's state behind a reader-writer lock: readers (pages, list
/// summaries) share it and never wait for one another, on any list; a
/// commit takes it alone and waits only for the readers inside.
///
/// Locking rule: `state` is read only between `pthread_rwlock_rdlock` and
/// unlock (through `read`, which lends it `borrowing`, so readers cannot
/// change it), and changed only between `pthread_rwlock_wrlock` and unlock
/// (through `write`). The lock prefers writers, so a stream of readers
/// cannot starve commits. Nothing that blocks runs under it, and a body
/// must not call back into the store (the lock is not recursive: a reader
/// waiting behind a queued writer would deadlock with itself).
///
/// What readers do under the lock is small on purpose: a page takes its
/// header and copy-on-write shares of one or two leaves (`Store.pageRows`)
/// and reads, encodes and compresses the rows after the lock is released.
/// So on a 16-core machine readers hold it for a few hundred nanoseconds
/// and a commit waits at most that long.
final class StoreLock: @unchecked Sendable {
    // @unchecked Sendable: `state` is only reached under `lock`, as written above.
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>
    private var state: StoreState

    init(_ state: consuming StoreState) {
        self.state = state
        lock = .allocate(capacity: 1)
        var attributes = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attributes)
        pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        let rc = pthread_rwlock_init(lock, &attributes)
        pthread_rwlockattr_destroy(&attributes)
        precondition(rc == 0, "pthread_rwlock_init failed: \(rc)")
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// Runs `body` with the state lent for reading, alongside other readers.
    func read<T, E: Error>(_ body: (borrowing StoreState) throws(E) -> T) throws(E) -> T {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(state)
    }

    /// Runs `body` with the state alone: no reader or other writer inside.
    func write<T, E: Error>(_ body: (inout StoreState) throws(E) -> T) throws(E) -> T {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(&state)
    }
}
