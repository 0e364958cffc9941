import CLinux

/// Gives the C heap's free memory back to the system (`malloc_trim(0)`).
///
/// Loading a big snapshot or import allocates and frees many transient
/// buffers (inflated blocks, decoder windows, a replaced list's rows); glibc
/// keeps that memory in its arenas, so the process would keep its loading
/// high-water mark as resident memory. Called once after recovery and after
/// each applied IMPORT, never on a request path: a trim walks the heap.
enum FreeMemory {
    static func giveBack() {
        _ = malloc_trim(0)
    }
}
