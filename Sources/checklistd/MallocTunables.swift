#if os(Linux)
import Glibc

/// glibc's allocator settings that only its environment variable can set,
/// applied by starting the process again with them (before anything else
/// runs: same pid, arguments and descriptors).
///
/// Each thread keeps a small cache of freed blocks per size (tcache), 7
/// blocks by default. An event loop that commits a few hundred patches a
/// turn allocates and frees a few hundred texts and arrays of each size:
/// past 7 every free and allocation takes glibc's slower shared paths
/// (`_int_free`, `_int_malloc`). With 1024 blocks a size the loop's writes
/// with 10 requests in flight go 10-15% faster (docs/PERFORMANCE.md,
/// "The allocator's thread cache"); resident memory per item is the same.
/// `mallopt` has no setting for it: only `GLIBC_TUNABLES` does, read when
/// the process starts.
enum MallocTunables {
    static let variable = "GLIBC_TUNABLES"
    static let tcacheCount = "glibc.malloc.tcache_count"
    /// Blocks of each size a thread's cache keeps.
    static let tcacheBlocks = 1024

    /// Starts the process again with `tcacheCount` set, unless the
    /// environment sets it already (an operator's own value is kept; a
    /// restarted process finds its own). Returns only when it does not
    /// restart (set already, or `/proc/self/exe` cannot be run: the
    /// process goes on with glibc's defaults).
    static func restartWithTunables() {
        let current = getenv(variable).map { String(cString: $0) }
        if let current, current.contains(tcacheCount) { return }
        let setting = "\(tcacheCount)=\(tcacheBlocks)"
        setenv(variable, current.map { $0.isEmpty ? setting : "\($0):\(setting)" } ?? setting, 1)
        execv("/proc/self/exe", CommandLine.unsafeArgv)
        // Not restarted: leave the environment as it was for any child.
        if let current { setenv(variable, current, 1) } else { unsetenv(variable) }
    }
}
#endif
