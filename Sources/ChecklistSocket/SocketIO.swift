#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if os(Linux)
import CLinux
#endif

// read/write wrappers. They retry EINTR and report EAGAIN as a value, not an
// error, because on a non-blocking socket it is the normal way to learn that
// the kernel buffer is empty (read) or full (write).

/// What one `readSocket` call got.
public enum SocketReadResult: Sendable, Hashable {
    /// This many bytes (at least 1) were read.
    case bytes(Int)
    /// The peer closed its sending side (read returned 0).
    case endOfFile
    /// Nothing to read now (`EAGAIN`): a non-blocking socket is empty, or a
    /// blocking socket's receive timeout passed.
    case wouldBlock
}

/// What one `writeSocket` call did.
public enum SocketWriteResult: Sendable, Hashable {
    /// This many bytes (at least 1, possibly fewer than offered) were written.
    case bytes(Int)
    /// The send buffer is full (`EAGAIN`), or a send timeout passed.
    case wouldBlock
}

/// One `read(2)` into `buffer`. `buffer` must not be empty.
/// Throws on errors other than `EINTR`/`EAGAIN` (e.g. `ECONNRESET`).
public func readSocket(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SocketError) -> SocketReadResult {
    precondition(buffer.count > 0, "readSocket needs room to read into")
    while true {
        let n = read(fd, buffer.baseAddress, buffer.count)
        if n > 0 { return .bytes(n) }
        if n == 0 { return .endOfFile }
        switch errno {
        case EINTR: continue
        case EAGAIN, EWOULDBLOCK: return .wouldBlock
        default: throw .lastError("read")
        }
    }
}

/// The `send(2)` flags that make a closed peer give `EPIPE`, never a
/// SIGPIPE: `MSG_NOSIGNAL` on Linux. Apple platforms have no such flag: there
/// the socket itself carries `SO_NOSIGPIPE` (`setNoSigPipe`, which every
/// socket this package creates gets).
@inlinable public var noSignalSendFlags: Int32 {
    #if os(Linux)
    return Int32(MSG_NOSIGNAL)
    #else
    return 0
    #endif
}

/// One `send(2)` of `bytes`, without SIGPIPE (a closed peer gives `EPIPE`).
/// `bytes` must not be empty.
/// Throws on errors other than `EINTR`/`EAGAIN` (e.g. `EPIPE`, `ECONNRESET`).
public func writeSocket(_ fd: Int32, from bytes: UnsafeRawBufferPointer) throws(SocketError) -> SocketWriteResult {
    try send(fd, bytes, flags: noSignalSendFlags)
}

/// One `send(2)` of `bytes` that does not wait even on a blocking socket
/// (`MSG_DONTWAIT`): for an alert or close_notify on the way out.
public func sendWithoutWaiting(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SocketError) -> SocketWriteResult {
    try send(fd, bytes, flags: noSignalSendFlags | Int32(MSG_DONTWAIT))
}

private func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, flags: Int32) throws(SocketError) -> SocketWriteResult {
    precondition(bytes.count > 0, "writeSocket needs bytes to write")
    while true {
        #if canImport(Glibc)
        let n = Glibc.send(fd, bytes.baseAddress, bytes.count, flags)
        #else
        let n = Darwin.send(fd, bytes.baseAddress, bytes.count, flags)
        #endif
        if n >= 0 { return .bytes(n) }
        switch errno {
        case EINTR: continue
        case EAGAIN, EWOULDBLOCK: return .wouldBlock
        default: throw .lastError("send")
        }
    }
}

/// Writes all of `bytes` to a blocking socket, looping over short writes.
/// Throws `EAGAIN` if the socket's send timeout passes (see `setTimeouts`).
public func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SocketError) {
    var offset = 0
    while offset < bytes.count {
        switch try writeSocket(fd, from: UnsafeRawBufferPointer(rebasing: bytes[offset...])) {
        case .bytes(let n): offset += n
        case .wouldBlock: throw SocketError(code: EAGAIN, operation: "send (timed out)")
        }
    }
}

/// Writes all of `bytes` to a blocking socket; see `writeAll(_:_:)`.
public func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SocketError) {
    guard !bytes.isEmpty else { return }
    // withUnsafeBytes is rethrows, so carry the typed error out by hand.
    let failure: SocketError? = bytes.withUnsafeBytes { (raw) -> SocketError? in
        do throws(SocketError) { try writeAll(fd, raw); return nil } catch { return error }
    }
    if let failure { throw failure }
}
