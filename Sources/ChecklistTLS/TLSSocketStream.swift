#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ChecklistSocket

/// A client or server `TLSSession` over a connected socket: the one path
/// between a session's memory buffers and a socket, used by every TLS
/// client of the project (the client library's connections, the blocking
/// frame client of tests and tools, the benchmark's load connections).
///
/// It keeps the ciphertext the socket has not taken yet (`writePending`
/// writes what a non-blocking socket takes, `writeAllPending` all of it on
/// a blocking one) and feeds what a socket read brings to the session
/// (`receive`). Framing, buffering of plaintext and waiting are the user's.
///
/// Not thread-safe: one owner at a time (a user shared between threads
/// guards it with a lock).
public final class TLSSocketStream {
    /// One socket read: a whole TLS record (16 KiB of plaintext plus its
    /// overhead), so that one read usually completes a record.
    public static let recordBytes = (16 << 10) + 512

    public let fd: Int32
    public let session: TLSSession
    /// Ciphertext taken from the session and not yet written: `pending[pendingSent...]`.
    private var pending: [UInt8] = []
    private var pendingSent = 0

    /// Wraps `session` over the connected socket `fd` (which the caller keeps and closes).
    public init(fd: Int32, session: TLSSession) {
        self.fd = fd
        self.session = session
    }

    /// What a socket read brought.
    public enum Received: Sendable, Equatable {
        /// `n` bytes of ciphertext, all fed to the session.
        case fed(Int)
        /// The socket had nothing (non-blocking, or its timeout passed).
        case wouldBlock
        /// The stream ended (or was reset); the session was told.
        case endOfFile
    }

    /// A failure of the socket or of the session.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        case socket(SocketError)
        case tls(TLSError)

        public var description: String {
            switch self {
            case .socket(let error): return error.description
            case .tls(let error): return error.message
            }
        }
    }

    // MARK: Sending

    /// Whether ciphertext waits for the socket.
    public var hasPendingOutput: Bool { pendingSent < pending.count || session.pendingOutput > 0 }

    /// Encrypts as much of `plaintext` as the session takes now (nothing
    /// while its output buffer is full: write the pending ciphertext
    /// first); returns how many bytes it took.
    public func encrypt(_ plaintext: UnsafeRawBufferPointer) throws(TLSError) -> Int {
        guard session.outputSpace > 0 else { return 0 }
        return try session.writePlaintext(plaintext)
    }

    /// Moves the session's ciphertext behind what already waits.
    private func collect() {
        let count = session.pendingOutput
        guard count > 0 else { return }
        if pendingSent == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingSent = 0
        }
        let start = pending.count
        pending += repeatElement(0, count: count)
        let taken = pending.withUnsafeMutableBytes { session.takeOutput(into: UnsafeMutableRawBufferPointer(rebasing: $0[start...])) }
        pending.removeLast(count - taken)
    }

    /// Writes what the socket takes now of the waiting ciphertext; returns
    /// how many bytes went out.
    @discardableResult
    public func writePending() throws(SocketError) -> Int {
        collect()
        guard pendingSent < pending.count else { return 0 }
        let sent = pendingSent
        let result = pending.withUnsafeBytes { raw in
            Result { () throws(SocketError) in try writeSocket(fd, from: UnsafeRawBufferPointer(rebasing: raw[sent...])) }
        }
        guard case .bytes(let n) = try result.get() else { return 0 }
        pendingSent += n
        if pendingSent == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingSent = 0
        }
        return n
    }

    /// Moves the waiting ciphertext to the end of `out`, for a user that
    /// gathers it with other bytes into one write of its own.
    public func takePending(appendingTo out: inout [UInt8]) {
        collect()
        guard pendingSent < pending.count else { return }
        out.append(contentsOf: pending[pendingSent...])
        pending.removeAll(keepingCapacity: true)
        pendingSent = 0
    }

    /// Writes all the waiting ciphertext to a blocking socket (bounded by
    /// its send timeout: `.wouldBlock` then becomes an `EAGAIN` error).
    public func writeAllPending() throws(SocketError) {
        while hasPendingOutput {
            if try writePending() == 0 && hasPendingOutput { throw SocketError(code: EAGAIN, operation: "send") }
        }
    }

    /// Writes what the socket takes at once of the waiting ciphertext (an
    /// alert, close_notify) and drops the rest: a failing or closing
    /// connection never waits for it.
    public func writePendingWithoutWaiting() {
        collect()
        guard pendingSent < pending.count else { return }
        let sent = pendingSent
        _ = pending.withUnsafeBytes { raw in try? sendWithoutWaiting(fd, UnsafeRawBufferPointer(rebasing: raw[sent...])) }
        pending.removeAll()
        pendingSent = 0
    }

    /// Queues close_notify and sends it if the socket takes it at once.
    public func closeNotify() {
        session.close()
        writePendingWithoutWaiting()
    }

    // MARK: Receiving

    /// One socket read into `buffer` (at most what the session takes now),
    /// fed to the session. A reset counts as the end of the stream.
    public func receive(using buffer: UnsafeMutableRawBufferPointer) throws(Failure) -> Received {
        let space = min(buffer.count, session.inputSpace)
        guard space > 0 else { return .fed(0) }
        let got: SocketReadResult
        do throws(SocketError) {
            got = try readSocket(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<space]))
        } catch where error.isDisconnect {
            session.endOfInput()
            return .endOfFile
        } catch {
            throw .socket(error)
        }
        switch got {
        case .wouldBlock:
            return .wouldBlock
        case .endOfFile:
            session.endOfInput()
            return .endOfFile
        case .bytes(let n):
            var fed = 0
            while fed < n {
                let took: Int
                do throws(TLSError) {
                    took = try session.feed(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[fed..<n]))
                } catch {
                    throw .tls(error)
                }
                // Never more than `inputSpace` was read, so everything fits.
                guard took > 0 else { throw .tls(TLSError(.protocolViolation, "the peer's TLS records overflow the session's input buffer")) }
                fed += took
            }
            return .fed(n)
        }
    }

    /// Plaintext from the records the session holds: `.wouldBlock` when it
    /// needs more ciphertext (`receive`), `.endOfFile` at close_notify or at
    /// an end of the stream without it (frames delimit themselves, so a
    /// truncated stream is an ordinary end).
    public func readPlaintext(into buffer: UnsafeMutableRawBufferPointer) throws(TLSError) -> SocketReadResult {
        let result: TLSSession.ReadResult
        do throws(TLSError) {
            result = try session.readPlaintext(into: buffer)
        } catch where error.code == .truncated {
            return .endOfFile
        }
        switch result {
        case .bytes(let n): return .bytes(n)
        case .closed: return .endOfFile
        case .wantsInput: return .wouldBlock
        }
    }

    /// Plaintext into `buffer`, reading the socket (through `scratch`) as
    /// needed: `.wouldBlock` only when the socket had nothing.
    public func read(into buffer: UnsafeMutableRawBufferPointer, scratch: UnsafeMutableRawBufferPointer) throws(Failure) -> SocketReadResult {
        while true {
            let result: SocketReadResult
            do throws(TLSError) {
                result = try readPlaintext(into: buffer)
            } catch {
                throw .tls(error)
            }
            guard case .wouldBlock = result else { return result }
            if try receive(using: scratch) == .wouldBlock { return .wouldBlock }
        }
    }
}
