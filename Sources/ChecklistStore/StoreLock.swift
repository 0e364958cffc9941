#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The store's state behind a reader-writer lock split into one slot per
/// reading thread (a "big reader" lock): readers (pages, list summaries)
/// never wait for one another, on any list, and do not even share a cache
/// line; a commit takes every slot and waits only for the readers inside.
///
/// Why slots: with one `pthread_rwlock_t`, every reader's lock and unlock is
/// an atomic read-modify-write of the same cache line, so on a 16-core
/// machine readers of different lists still queue for that line. Here a
/// thread locks only its own slot (chosen once per thread, round robin,
/// kept in a thread-specific value), each slot on its own 128 bytes; a
/// writer locks all of them, in slot order (so two writers cannot
/// deadlock). Commits are far rarer than reads and take a few hundred
/// nanoseconds more; a read costs one uncontended lock of a line its own
/// core holds.
///
/// Locking rule: `state` is read only while the reader holds one slot
/// shared (through `read`, which lends it `borrowing`, so readers cannot
/// change it), and changed only while the writer holds every slot
/// exclusively (through `write`). Each slot prefers writers, so a stream of
/// readers cannot starve commits. Nothing that blocks runs under it, and a
/// body must not call back into the store (the lock is not recursive: a
/// reader waiting behind a queued writer would deadlock with itself).
///
/// What readers do under the lock is small on purpose: a page takes its
/// header and copy-on-write shares of one or two leaves (`Store.pageRows`)
/// and reads, encodes and compresses the rows after the lock is released.
final class StoreLock: @unchecked Sendable {
    // @unchecked Sendable: `state` is only reached under the slots, as written above.
    /// Bytes per slot: a `pthread_rwlock_t` (56) padded past two cache lines,
    /// so that neighbouring slots never share a line or its prefetch pair.
    private static let slotStride = 128
    private let slots: UnsafeMutableRawPointer
    private let slotCount: Int
    private var state: StoreState

    init(_ state: consuming StoreState) {
        self.state = state
        slotCount = Self.slotCountForThisMachine()
        slots = .allocate(byteCount: slotCount * Self.slotStride, alignment: Self.slotStride)
        var attributes = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attributes)
        pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        for i in 0..<slotCount {
            let slot = slots.advanced(by: i * Self.slotStride).bindMemory(to: pthread_rwlock_t.self, capacity: 1)
            slot.initialize(to: pthread_rwlock_t())
            let rc = pthread_rwlock_init(slot, &attributes)
            precondition(rc == 0, "pthread_rwlock_init failed: \(rc)")
        }
        pthread_rwlockattr_destroy(&attributes)
    }

    deinit {
        for i in 0..<slotCount { pthread_rwlock_destroy(slot(i)) }
        slots.deallocate()
    }

    /// Runs `body` with the state lent for reading, alongside other readers.
    func read<T, E: Error>(_ body: (borrowing StoreState) throws(E) -> T) throws(E) -> T {
        let mine = slot(ReaderSlot.index(of: slotCount))
        pthread_rwlock_rdlock(mine)
        defer { pthread_rwlock_unlock(mine) }
        return try body(state)
    }

    /// Runs `body` with the state alone: no reader or other writer inside.
    func write<T, E: Error>(_ body: (inout StoreState) throws(E) -> T) throws(E) -> T {
        for i in 0..<slotCount { pthread_rwlock_wrlock(slot(i)) }
        defer { for i in (0..<slotCount).reversed() { pthread_rwlock_unlock(slot(i)) } }
        return try body(&state)
    }

    @inline(__always)
    private func slot(_ i: Int) -> UnsafeMutablePointer<pthread_rwlock_t> {
        slots.advanced(by: i * Self.slotStride).assumingMemoryBound(to: pthread_rwlock_t.self)
    }

    /// One slot per online core, at least 4 and at most 64, a power of two.
    private static func slotCountForThisMachine() -> Int {
        let cores = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        var count = 4
        while count < cores && count < 64 { count <<= 1 }
        return count
    }
}

/// Which reader slot the calling thread uses: the n-th thread that reads
/// gets number n, kept in a thread-specific value, so that threads (event
/// loops, one per core) spread over the slots without hashing.
private enum ReaderSlot {
    /// The key of the thread-specific value: the thread's number plus one
    /// (0, the value of a thread that never read, means none yet).
    static let key: pthread_key_t = {
        var key = pthread_key_t()
        let rc = pthread_key_create(&key, nil)
        precondition(rc == 0, "pthread_key_create failed: \(rc)")
        return key
    }()
    /// The next thread number to hand out.
    static let next = Atomic<Int>(0)

    @inline(__always)
    static func index(of slotCount: Int) -> Int {
        let stored = Int(bitPattern: pthread_getspecific(key))
        if stored != 0 { return (stored - 1) & (slotCount - 1) }
        let number = next.wrappingAdd(1, ordering: .relaxed).oldValue
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: number + 1))
        return number & (slotCount - 1)
    }
}
