import CLinux
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
/// request: a trim walks the heap.
enum FreeMemory {
    /// A batch of at least this many operations counts as large.
    static let largeBatch = 256
    /// Operations of large batches between two trims (with 40-byte texts
    /// about 1 MB of requests, so little high water is left after a fill;
    /// a trim costs about a millisecond).
    static let largeBatchOperations = 16_384

    private static let pending = Atomic<Int>(0)

    static func giveBack() {
        _ = malloc_trim(0)
    }

    /// Counts a PATCH of `operations` just applied, and gives memory back
    /// once large batches have added up to `largeBatchOperations`.
    static func applied(batchOf operations: Int) {
        guard operations >= largeBatch else { return }
        let total = pending.add(operations, ordering: .relaxed).newValue
        guard total >= largeBatchOperations else { return }
        // One caller wins the reset and trims; the others go on.
        guard pending.compareExchange(expected: total, desired: 0, ordering: .relaxed).exchanged else { return }
        giveBack()
    }
}
