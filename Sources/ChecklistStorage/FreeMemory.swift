import CLinux
import ChecklistModel
import Synchronization

/// Gives the C heap's free memory back to the system (`malloc_trim(0)`).
///
/// Loading a big snapshot or import allocates and frees many transient
/// buffers (inflated blocks, decoder windows, a replaced list's rows); glibc
/// keeps that memory in its arenas, so the process would keep its loading
/// high-water mark as resident memory. Called once after recovery and after
/// each applied IMPORT, and after every `largeBatchOperations` operations of
/// large PATCH batches (a bulk fill over the wire leaves the same kind of
/// high water: decoded batches, their log records and changes); never per
/// request: a trim walks the heap. The commits count those operations
/// (`noteCommitted`, the store's commit fan-out) and the storage's own
/// thread trims when they added up (`giveBackIfDue`: the data directory's
/// compactor tick, the PostgreSQL committer after each batch), so no trim
/// runs on an event loop or under the store's lock.
public enum FreeMemory {
    /// A batch of at least this many operations counts as large.
    static let largeBatch = 256
    /// Operations of large batches between two trims (with 40-byte texts
    /// about 1 MB of requests, so little high water is left after a fill;
    /// a trim costs about a millisecond).
    static let largeBatchOperations = 16_384

    private static let pending = Atomic<Int>(0)

    /// Allocations of at least this many bytes get pages of their own
    /// (`M_MMAP_THRESHOLD`), returned to the system when freed.
    static let ownPagesFrom = 512 << 10
    /// Free memory at the top of a heap beyond this is returned at once
    /// (`M_TRIM_THRESHOLD`).
    static let trimTopAbove = 2 << 20

    /// Fixes the C heap's thresholds for the server process; call once,
    /// before the server starts. glibc raises both thresholds each time a
    /// large block it mapped is freed (up to 32 MiB and 64 MiB), so after
    /// the log's batch buffers grew during a bulk fill, the buffers of the
    /// next one came from the heap and stayed there as free holes among the
    /// rows: up to 16 bytes per item of a 1M-item fill, varying from run to
    /// run (Benchmarks/README.md, "memory"). Set explicitly they stay put
    /// (mallopt(3)): large buffers go back to the system when freed, and
    /// the heap only keeps what the rows use.
    public static func keepHeapTight() {
        _ = mallopt(M_MMAP_THRESHOLD, Int32(ownPagesFrom))
        _ = mallopt(M_TRIM_THRESHOLD, Int32(trimTopAbove))
    }

    /// Returns the free memory of every heap to the system now.
    package static func giveBack() {
        _ = malloc_trim(0)
    }

    /// Counts the operations of the large PATCH batches among one commit's
    /// `changes`. The store's commit fan-out, under the store's lock: one
    /// atomic add, never a trim.
    package static func noteCommitted(_ changes: [Change]) {
        for i in changes.indices {  // by index: reading the kind copies no change
            guard case .patched(let operations) = changes[i].kind, operations.count >= largeBatch else { continue }
            pending.add(operations.count, ordering: .relaxed)
        }
    }

    /// Gives memory back once large batches have added up to
    /// `largeBatchOperations` since the last time. From a storage's own
    /// thread (its upkeep tick, its committer), never under the store's lock.
    package static func giveBackIfDue() {
        let total = pending.load(ordering: .relaxed)
        guard total >= largeBatchOperations else { return }
        // One caller wins the reset and trims; the others go on.
        guard pending.compareExchange(expected: total, desired: 0, ordering: .relaxed).exchanged else { return }
        giveBack()
    }
}
