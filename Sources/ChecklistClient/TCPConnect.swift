import ChecklistIO
import ChecklistSocket
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opening the TCP connection. `ChecklistSocket.connectSocket` takes
/// numeric addresses and blocks without a time limit; a client needs host
/// names and a deadline, so this resolves with `getaddrinfo` and connects
/// non-blocking, waiting with ChecklistIO's `waitForSocket`.
enum TCPConnect {
    /// Resolves `host`, connects to the first address that answers before
    /// `deadline`, and returns a non-blocking socket with `TCP_NODELAY` set
    /// (close-on-exec, and `SO_NOSIGPIPE` on Apple platforms).
    /// Blocks the calling thread: call it off the async executor.
    static func connect(host: String, port: UInt16, deadline: ContinuousClock.Instant) throws(ClientError) -> Int32 {
        var name = host
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        let target = name.contains(":") ? "[\(name)]:\(port)" : "\(name):\(port)"

        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if os(Linux)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(name, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            throw ClientError(.connectionFailed, "cannot connect to \(target): cannot resolve \(name): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(first) }

        var lastError = ClientError(.connectionFailed, "cannot connect to \(target): no address")
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next {
            next = info.pointee.ai_next
            do {
                return try connect(info.pointee, target: target, deadline: deadline)
            } catch {
                lastError = error
                if error.code == .timeout { break }
            }
        }
        throw lastError
    }

    private static func connect(_ info: addrinfo, target: String, deadline: ContinuousClock.Instant) throws(ClientError) -> Int32 {
        let fd: Int32
        do throws(SocketError) {
            fd = try makeStreamSocket(family: info.ai_family, nonBlocking: true, protocol: info.ai_protocol)
        } catch {
            throw failure(target, error.code)
        }
        var connected = false
        defer { if !connected { closeSocket(fd) } }

        if systemConnect(fd, info.ai_addr, info.ai_addrlen) != 0 {
            // EINTR: the attempt goes on in the kernel, as with EINPROGRESS.
            guard errno == EINPROGRESS || errno == EINTR else { throw failure(target, errno) }
            let ready: ReadinessEvents?
            do throws(SocketError) {
                ready = try waitForSocket(fd, .writable, deadline: deadline)
            } catch {
                throw ClientError(.connectionFailed, "cannot connect to \(target): \(error)")
            }
            guard ready != nil else { throw ClientError(.timeout, "cannot connect to \(target): timed out") }
            var soError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length) == 0 else { throw failure(target, errno) }
            guard soError == 0 else { throw failure(target, soError) }
        }
        do throws(SocketError) {
            try setNoDelay(fd)
        } catch {
            throw ClientError(.connectionFailed, "cannot connect to \(target): \(error)")
        }
        connected = true
        return fd
    }

    private static func systemConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
        #if canImport(Glibc)
        Glibc.connect(fd, address, length)
        #else
        Darwin.connect(fd, address, length)
        #endif
    }

    private static func failure(_ target: String, _ code: Int32) -> ClientError {
        ClientError(.connectionFailed, "cannot connect to \(target): \(String(cString: strerror(code)))")
    }
}
