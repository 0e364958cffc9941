import ChecklistSocket
import ChecklistTLS
import ChecklistWire

/// The one frame connection core under every client of the project: the
/// client library's connections (driven by its I/O thread), the blocking
/// `FrameSocket` of tests, tools and the conformance runner, and the
/// benchmark's load connections (driven by their worker). It holds a
/// non-blocking socket, the TLS layer over it when there is one
/// (ChecklistTLS's `TLSSocketStream`), the bytes received and not yet
/// parsed into frames (extracted with ChecklistWire's `FrameParser`), and a
/// bounded queue of frame bytes not yet written.
///
/// Its steps never wait: `readAvailable` reads what the socket has,
/// `nextFrame` hands out the whole frames received, `flush` writes what the
/// socket takes, `advanceHandshake` moves a TLS handshake on as far as the
/// bytes allow. Waiting (a readiness loop, or `waitForSocket` for a blocking
/// user) and what to do with each frame are the user's policy. Failures are
/// thrown as `FrameStreamError`; nothing here traps on a peer's bytes.
///
/// Not thread-safe: one owner at a time (a user hands it from the thread
/// that connected to the thread that serves it, and never touches it
/// again).
public final class FrameStream {
    /// The bound of the send queue unless configured: four 1 MiB frames.
    public static let defaultSendLimit = 4 << 20

    /// The socket (non-blocking); closed by `close`, or when the stream is
    /// released still open.
    public let fd: Int32
    /// The TLS layer over `fd`, or nil for plaintext.
    public let tls: TLSSocketStream?
    /// The most plaintext bytes the send queue holds (a single larger
    /// write is accepted when the queue is empty).
    public let sendLimit: Int

    private var input: FrameInput
    /// Frame bytes queued: `output.bytes[outputSent...]` are neither written
    /// nor handed to TLS yet.
    private var output = WireWriter(capacity: 256)
    private var outputSent = 0
    /// One socket read of ciphertext (TLS only).
    let scratch: UnsafeMutableRawBufferPointer?
    private(set) public var isClosed = false

    /// A stream over the connected socket `fd` (made non-blocking here),
    /// plaintext or, with `tls`, through that client or server session
    /// (whose handshake `advanceHandshake` runs, unless it is done).
    ///
    /// - Parameters:
    ///   - sendLimit: the bound of the send queue in bytes.
    ///   - receiveCapacity: the receive buffer's usual size (it grows for
    ///     a larger frame, and shrinks back).
    /// - Throws: `FrameStreamError` `.socket` when the socket cannot be made
    ///   non-blocking (the caller keeps and closes `fd`).
    public init(fd: Int32, tls session: TLSSession? = nil, sendLimit: Int = FrameStream.defaultSendLimit,
                receiveCapacity: Int = 64 << 10) throws(FrameStreamError) {
        do throws(SocketError) {
            try setNonBlocking(fd)
        } catch {
            throw FrameStreamError(error)
        }
        self.fd = fd
        self.tls = session.map { TLSSocketStream(fd: fd, session: $0) }
        self.sendLimit = sendLimit
        self.input = FrameInput(capacity: receiveCapacity)
        self.scratch = session == nil ? nil : .allocate(byteCount: TLSSocketStream.recordBytes, alignment: 16)
    }

    deinit {
        scratch?.deallocate()
        if !isClosed { closeSocket(fd) }
    }

    // MARK: Reading

    /// What one `readAvailable` got.
    public enum ReadStep: Sendable, Hashable {
        /// This many bytes came from the socket (ciphertext, with TLS).
        case bytes(Int)
        /// The socket had nothing.
        case wouldBlock
        /// The peer ended the stream (with TLS: close_notify, or the end
        /// of the socket). Frames received before it are still buffered.
        case endOfFile
    }

    /// One socket read; with TLS, every byte of plaintext it completes.
    /// Take the whole frames with `nextFrame` after it, also after
    /// `.endOfFile`. With TLS, call `flush` when `hasPendingOutput` says the
    /// session wants to send (a KeyUpdate answer).
    public func readAvailable() throws(FrameStreamError) -> ReadStep {
        guard let tls, let scratch else {
            do throws(SocketError) {
                let result = try readSocket(fd, into: input.prepareForRead())
                switch result {
                case .bytes(let n):
                    input.didRead(n)
                    return .bytes(n)
                case .endOfFile: return .endOfFile
                case .wouldBlock: return .wouldBlock
                }
            } catch {
                throw FrameStreamError(error)
            }
        }
        let received: TLSSocketStream.Received
        do throws(TLSSocketStream.Failure) {
            received = try tls.receive(using: scratch)
        } catch {
            throw FrameStreamError(error)
        }
        if received == .wouldBlock { return .wouldBlock }
        if try takePlaintext() || received == .endOfFile { return .endOfFile }
        if case .fed(let n) = received { return .bytes(n) }
        return .wouldBlock
    }

    /// Moves the plaintext the session holds into the receive buffer;
    /// returns true at its end (close_notify or a truncated stream).
    func takePlaintext() throws(FrameStreamError) -> Bool {
        guard let tls else { return false }
        while true {
            let result: SocketReadResult
            do throws(TLSError) {
                result = try tls.readPlaintext(into: input.prepareForRead())
            } catch {
                throw FrameStreamError(error)
            }
            switch result {
            case .bytes(let n): input.didRead(n)
            case .endOfFile: return true
            case .wouldBlock: return false
            }
        }
    }

    /// Bytes received and not yet taken as frames.
    public var bufferedBytes: Int { input.count }

    /// The next whole frame received, handed to `body` (its bytes are valid
    /// only there), then consumed; nil when no whole frame is buffered.
    /// `body` may queue frames and close the stream, but not read.
    ///
    /// - Throws: `FrameStreamError` `.framing` when the peer broke framing
    ///   (a length under the header, or over `maxFrameBytes`).
    public func nextFrame<R>(maxFrameBytes: UInt32, _ body: (FrameHeader, UnsafeRawBufferPointer) -> R) throws(FrameStreamError) -> R? {
        let readable = input.readable
        switch FrameParser.next(in: readable, maxFrameBytes: maxFrameBytes) {
        case .needMore:
            return nil
        case .fatal(let error):
            throw FrameStreamError(.framing, "the peer broke framing (\(error))", framing: error)
        case .frame(let header, let range, let consumed):
            let result = body(header, UnsafeRawBufferPointer(rebasing: readable[range]))
            input.consume(consumed)
            return result
        }
    }

    // MARK: Writing

    /// Frame bytes queued and not yet written (or handed to TLS).
    public var queuedBytes: Int { output.count - outputSent }

    /// Whether bytes wait for the socket: queued frames, or ciphertext.
    public var hasPendingOutput: Bool { queuedBytes > 0 || tls?.hasPendingOutput == true }

    /// Queues `bytes` as they are (`flush` writes them).
    ///
    /// - Throws: `.sendQueueFull` when the queue holds bytes and these would
    ///   take it past `sendLimit`; nothing is queued then.
    public func enqueue(_ bytes: UnsafeRawBufferPointer) throws(FrameStreamError) {
        try checkRoom(for: bytes.count)
        compactOutput()
        output.bytes.append(contentsOf: bytes)
    }

    /// Queues `bytes`; see `enqueue(_:)`.
    public func enqueue(_ bytes: [UInt8]) throws(FrameStreamError) {
        try checkRoom(for: bytes.count)
        compactOutput()
        output.bytes.append(contentsOf: bytes)
    }

    /// Queues the frames `encode` writes straight into the queue (no copy).
    ///
    /// - Throws: `.sendQueueFull` as `enqueue` does; what `encode` wrote is
    ///   taken back then.
    public func enqueueFrames(_ encode: (inout WireWriter) -> Void) throws(FrameStreamError) {
        compactOutput()
        let before = output.count
        encode(&output)
        let added = output.count - before
        if before > outputSent && before - outputSent + added > sendLimit {
            output.bytes.removeLast(added)
            throw fullError(added)
        }
    }

    private func checkRoom(for count: Int) throws(FrameStreamError) {
        if queuedBytes > 0 && queuedBytes + count > sendLimit { throw fullError(count) }
    }

    private func fullError(_ count: Int) -> FrameStreamError {
        FrameStreamError(.sendQueueFull, "the send queue is full (\(queuedBytes) bytes not yet written, limit \(sendLimit)): "
                         + "the peer takes bytes slower than they are sent; \(count) bytes were not queued")
    }

    /// Drops the written bytes from the front of the queue once they are
    /// many, and releases a queue grown large once it is empty.
    private func compactOutput() {
        if outputSent == output.count {
            if output.bytes.capacity > Self.defaultSendLimit { output = WireWriter(capacity: 256) } else { output.reset() }
            outputSent = 0
        } else if outputSent >= 64 << 10 {
            output.bytes.removeFirst(outputSent)
            outputSent = 0
        }
    }

    /// What one `flush` did.
    public struct FlushStep: Sendable, Hashable {
        /// Bytes the socket took (ciphertext, with TLS).
        public var written: Int
        /// True when nothing waits any more; false when the socket is full
        /// (flush again once it is writable).
        public var isDone: Bool
    }

    /// Writes what the socket takes now of the queue (with TLS: encrypts
    /// it, then writes the ciphertext, and what the session wants to send
    /// besides).
    @discardableResult
    public func flush() throws(FrameStreamError) -> FlushStep {
        if let tls { return try flushTLS(tls) }
        var written = 0
        while outputSent < output.count {
            let sent = outputSent
            let result = output.bytes.withUnsafeBytes { raw in
                Result { () throws(SocketError) in try writeSocket(fd, from: UnsafeRawBufferPointer(rebasing: raw[sent...])) }
            }
            switch result {
            case .success(.bytes(let n)):
                outputSent += n
                written += n
            case .success(.wouldBlock):
                return FlushStep(written: written, isDone: false)
            case .failure(let error):
                throw FrameStreamError(error)
            }
        }
        compactOutput()
        return FlushStep(written: written, isDone: true)
    }

    private func flushTLS(_ tls: TLSSocketStream) throws(FrameStreamError) -> FlushStep {
        var written = 0
        while true {
            var took = 0
            if outputSent < output.count {
                let sent = outputSent
                let result = output.bytes.withUnsafeBytes { raw in
                    Result { () throws(TLSError) in try tls.encrypt(UnsafeRawBufferPointer(rebasing: raw[sent...])) }
                }
                do throws(TLSError) { took = try result.get() } catch { throw FrameStreamError(error) }
                outputSent += took
            }
            let wrote: Int
            do throws(SocketError) { wrote = try tls.writePending() } catch { throw FrameStreamError(error) }
            written += wrote
            if !tls.hasPendingOutput {
                if outputSent == output.count { break }
                if took == 0 { throw FrameStreamError(TLSError(.protocolViolation, "the TLS session takes no plaintext")) }
            } else if wrote == 0 {
                return FlushStep(written: written, isDone: false)
            }
        }
        compactOutput()
        return FlushStep(written: written, isDone: true)
    }

    // MARK: Closing

    /// Closes the socket; with TLS and `notify`, first sends close_notify if
    /// the socket takes it at once (closing never waits). Idempotent.
    public func close(notify: Bool = true) {
        guard !isClosed else { return }
        isClosed = true
        if notify { tls?.closeNotify() }
        closeSocket(fd)
    }
}
