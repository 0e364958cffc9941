#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if os(Linux)
import CLinux
#endif

/// Raises this process's `RLIMIT_NOFILE` soft limit to its hard limit, so a
/// server can hold thousands of connections (each is one descriptor).
///
/// - Returns: the limits in force afterwards. If raising fails, the soft
///   limit is simply left as it was.
@discardableResult
public func raiseFileDescriptorLimit() -> (soft: UInt64, hard: UInt64) {
    #if os(Linux)
    let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    let resource = RLIMIT_NOFILE
    #endif
    var limit = rlimit()
    guard getrlimit(resource, &limit) == 0 else { return (0, 0) }
    if limit.rlim_cur < limit.rlim_max {
        var raised = limit
        raised.rlim_cur = limit.rlim_max
        if setrlimit(resource, &raised) == 0 { limit = raised }
    }
    return (UInt64(limit.rlim_cur), UInt64(limit.rlim_max))
}
