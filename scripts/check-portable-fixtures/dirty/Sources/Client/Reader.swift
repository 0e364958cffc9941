#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if os(Linux)
import CLinux
#endif

// A comment naming epoll_wait and MSG_NOSIGNAL is not a use.
/* Nor is a block comment: accept4, SOCK_CLOEXEC. */
func wait() {
    #if os(Linux)
    let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
    #if DEBUG
    _ = eventfd(0, 0)
    #endif
    #else
    let kq = poll(nil, 0, 0)
    #endif
    #if !os(Linux)
    let portable = 0
    #else
    _ = Glibc.close(3)
    #endif
}
