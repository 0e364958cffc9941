#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if os(Linux)
import CLinux
#endif

// Creating, connecting, accepting and closing TCP sockets. Every descriptor
// made here is close-on-exec, so a spawned child process never inherits one.

/// Makes a listening TCP socket bound to `host:port` (`SO_REUSEADDR`,
/// non-blocking, close-on-exec).
///
/// - Parameters:
///   - host: a numeric IPv4/IPv6 address or `localhost`.
///   - port: 0 picks a free port; the returned `port` is the one bound.
///   - backlog: the `listen(2)` backlog (the kernel caps it at `somaxconn`).
/// - Returns: the descriptor and the bound port.
public func makeListeningSocket(host: String, port: UInt16, backlog: Int32 = 4096) throws(SocketError) -> (fd: Int32, port: UInt16) {
    let address = try SocketAddress(host: host, port: port)
    let fd = try makeStreamSocket(family: address.addressFamily, nonBlocking: true)
    do throws(SocketError) {
        try setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1, "setsockopt SO_REUSEADDR")
        let bound = address.withSockAddr { bind(fd, $0, $1) }
        guard bound == 0 else { throw SocketError.lastError("bind \(address)") }
        guard listen(fd, backlog) == 0 else { throw SocketError.lastError("listen \(address)") }
        return (fd, try localAddress(of: fd).port)
    } catch {
        closeSocket(fd)
        throw error
    }
}

/// Connects a blocking TCP socket to `host:port` (`TCP_NODELAY`, close-on-exec).
public func connectSocket(host: String, port: UInt16) throws(SocketError) -> Int32 {
    try connectSocket(to: SocketAddress(host: host, port: port))
}

/// Connects a blocking TCP socket to `address` (`TCP_NODELAY`, close-on-exec).
/// Retries `connect` interrupted by a signal.
public func connectSocket(to address: SocketAddress) throws(SocketError) -> Int32 {
    let fd = try makeStreamSocket(family: address.addressFamily, nonBlocking: false)
    do throws(SocketError) {
        while true {
            let rc = address.withSockAddr { connect(fd, $0, $1) }
            if rc == 0 { break }
            // EINTR: the connection attempt goes on in the kernel; the next
            // connect either finishes (EISCONN) or waits for it (EALREADY).
            if errno == EINTR || errno == EALREADY { continue }
            if errno == EISCONN { break }
            throw SocketError.lastError("connect \(address)")
        }
        try setNoDelay(fd)
        return fd
    } catch {
        closeSocket(fd)
        throw error
    }
}

/// A new TCP socket of `family` (`AF_INET`, `AF_INET6`): close-on-exec,
/// without SIGPIPE on Apple platforms (`SO_NOSIGPIPE`), non-blocking if asked.
/// Linux sets the flags in the `socket` call; Apple platforms with `fcntl`.
public func makeStreamSocket(family: Int32, nonBlocking: Bool, protocol: Int32 = 0) throws(SocketError) -> Int32 {
    #if os(Linux)
    var type = SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue
    if nonBlocking { type |= SOCK_NONBLOCK.rawValue }
    let fd = socket(family, Int32(type), `protocol`)
    guard fd >= 0 else { throw .lastError("socket") }
    return fd
    #else
    let fd = socket(family, SOCK_STREAM, `protocol`)
    guard fd >= 0 else { throw .lastError("socket") }
    do throws(SocketError) {
        try setDescriptorFlags(fd, nonBlocking: nonBlocking)
        return fd
    } catch {
        closeSocket(fd)
        throw error
    }
    #endif
}

#if !os(Linux)
/// Close-on-exec, `SO_NOSIGPIPE` and (if asked) `O_NONBLOCK` on a new socket:
/// what Linux's `SOCK_CLOEXEC`/`SOCK_NONBLOCK`/`MSG_NOSIGNAL` give there.
private func setDescriptorFlags(_ fd: Int32, nonBlocking: Bool) throws(SocketError) {
    guard fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else { throw .lastError("fcntl F_SETFD") }
    try setNoSigPipe(fd)
    if nonBlocking { try setNonBlocking(fd) }
}
#endif

/// Makes a closed peer give `EPIPE` instead of SIGPIPE on Apple platforms
/// (`SO_NOSIGPIPE`). On Linux sends pass `MSG_NOSIGNAL` (`noSignalSendFlags`)
/// and this does nothing.
public func setNoSigPipe(_ fd: Int32) throws(SocketError) {
    #if !os(Linux)
    try setOption(fd, SOL_SOCKET, SO_NOSIGPIPE, 1, "setsockopt SO_NOSIGPIPE")
    #endif
}

/// Accepts one pending connection from a non-blocking listening socket. The
/// new socket is non-blocking and close-on-exec (`accept4` on Linux,
/// `accept` and `fcntl` on Apple platforms).
///
/// - Returns: nil when no connection is pending (`EAGAIN`). A connection
///   that was reset before it was accepted is skipped. Interrupted calls retry.
/// - Throws: other errors, notably `EMFILE`/`ENFILE` (out of descriptors),
///   after which the caller should stop accepting for a while.
public func acceptConnection(_ listenFD: Int32) throws(SocketError) -> (fd: Int32, peer: SocketAddress?)? {
    while true {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                #if os(Linux)
                accept4(listenFD, $0, &length, Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue))
                #else
                accept(listenFD, $0, &length)
                #endif
            }
        }
        #if !os(Linux)
        if fd >= 0 {
            do throws(SocketError) {
                try setDescriptorFlags(fd, nonBlocking: true)
            } catch {
                closeSocket(fd)
                throw error
            }
        }
        #endif
        if fd >= 0 { return (fd, SocketAddress(storage)) }
        switch errno {
        case EINTR, ECONNABORTED, EPROTO: continue
        case EAGAIN, EWOULDBLOCK: return nil
        default: throw .lastError("accept")
        }
    }
}

/// Switches `O_NONBLOCK` on or off.
public func setNonBlocking(_ fd: Int32, _ nonBlocking: Bool = true) throws(SocketError) {
    let flags = fcntl(fd, F_GETFL)
    guard flags >= 0 else { throw .lastError("fcntl F_GETFL") }
    let wanted = nonBlocking ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
    guard wanted == flags || fcntl(fd, F_SETFL, wanted) == 0 else { throw .lastError("fcntl F_SETFL") }
}

/// Switches `TCP_NODELAY` (no Nagle delay for small writes) on or off.
public func setNoDelay(_ fd: Int32, _ noDelay: Bool = true) throws(SocketError) {
    try setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, noDelay ? 1 : 0, "setsockopt TCP_NODELAY")
}

/// Sets `SO_RCVTIMEO` / `SO_SNDTIMEO` on a blocking socket; a read or write
/// that waits longer fails with `EAGAIN`. nil leaves that direction unchanged;
/// `.zero` means wait forever.
public func setTimeouts(_ fd: Int32, receive: Duration?, send: Duration?) throws(SocketError) {
    func interval(_ d: Duration) -> timeval {
        let (seconds, attoseconds) = d.components
        return timeval(tv_sec: .init(seconds), tv_usec: .init(attoseconds / 1_000_000_000_000))
    }
    for (option, value, name) in [(SO_RCVTIMEO, receive, "SO_RCVTIMEO"), (SO_SNDTIMEO, send, "SO_SNDTIMEO")] {
        guard let value else { continue }
        var tv = interval(value)
        guard setsockopt(fd, SOL_SOCKET, option, &tv, socklen_t(MemoryLayout<timeval>.size)) == 0 else {
            throw .lastError("setsockopt \(name)")
        }
    }
}

/// Which direction `shutdownSocket` closes.
public enum SocketShutdown: Sendable {
    case read, write, both
}

/// `shutdown(2)`: a half-close. `.write` sends FIN; the peer reads end-of-file
/// but can still send to us.
public func shutdownSocket(_ fd: Int32, _ how: SocketShutdown) throws(SocketError) {
    let value: Int32
    switch how {
    case .read: value = Int32(SHUT_RD)
    case .write: value = Int32(SHUT_WR)
    case .both: value = Int32(SHUT_RDWR)
    }
    guard shutdown(fd, value) == 0 else { throw .lastError("shutdown") }
}

/// Closes a descriptor. Errors are ignored: on Linux the descriptor is released
/// even when `close` reports `EINTR`, so retrying could close someone else's.
public func closeSocket(_ fd: Int32) {
    _ = close(fd)
}

/// The address a socket is bound to (`getsockname`).
public func localAddress(of fd: Int32) throws(SocketError) -> SocketAddress {
    try socketName(fd, "getsockname", getsockname)
}

private func socketName(
    _ fd: Int32, _ name: String,
    _ call: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
) throws(SocketError) -> SocketAddress {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let rc = withUnsafeMutablePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(fd, $0, &length) }
    }
    guard rc == 0 else { throw .lastError(name) }
    guard let address = SocketAddress(storage) else { throw SocketError(code: EAFNOSUPPORT, operation: name) }
    return address
}

private func setOption(_ fd: Int32, _ level: Int32, _ option: Int32, _ value: Int32, _ name: String) throws(SocketError) {
    var value = value
    guard setsockopt(fd, level, option, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
        throw .lastError(name)
    }
}
