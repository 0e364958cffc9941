#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func send(_ fd: Int32) {
    #if os(Linux)
    let flags = Int32(MSG_NOSIGNAL)
    #else
    let flags: Int32 = 0
    #endif
    // The one unguarded use:
    _ = Int32(MSG_NOSIGNAL) | flags
}
