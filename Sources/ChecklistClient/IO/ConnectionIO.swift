import ChecklistIO
import ChecklistSocket

/// One connection as the I/O thread serves it: its receive buffer, the
/// frames it took from the connection's queue and the bytes ready for the
/// socket (plaintext frames, or TLS records). Touched only by the I/O
/// thread; the socket is non-blocking from `register` on.
final class ConnectionIO<R: Readiness> {
    /// Frames are gathered into one write up to this many bytes.
    static var coalesceBytes: Int { 64 << 10 }

    let core: ConnectionCore
    private let readiness: R
    private var buffer = ReadBuffer()
    /// Frames taken from the connection's queue and not yet all in `out`:
    /// `frames[frameIndex...]`, the first from `frameOffset` (TLS takes a
    /// frame in pieces when its output buffer fills).
    private var frames: [[UInt8]] = []
    private var frameIndex = 0
    private var frameOffset = 0
    /// Bytes for the socket: `out[outOffset...]` are not written yet.
    private var out: [UInt8] = []
    private var outOffset = 0
    /// Frame bytes moved into `out` (or into TLS) since the queue was told.
    private var moved = 0
    /// Whether the readiness layer reports this socket when writable.
    private var watchingWrites = false
    /// True once the socket is closed and the core told.
    private(set) var isEnded = false

    init(_ core: ConnectionCore, readiness: R) {
        self.core = core
        self.readiness = readiness
    }

    /// Makes the socket non-blocking and watches it; writes what was queued
    /// before. Returns false (the connection ended) if that failed.
    func register() -> Bool {
        do throws(ClientError) {
            do throws(SocketError) {
                try setNonBlocking(core.fd)
            } catch {
                throw ClientError(.ioFailed, "cannot make the socket non-blocking: \(error)")
            }
            do throws(SocketError) {
                try readiness.register(core.fd, token: core.ioToken, interest: .readable)
            } catch {
                throw ClientError(.ioFailed, "cannot watch the socket: \(error)")
            }
        } catch {
            isEnded = true
            closeSocket(core.fd)
            core.finishReading(error)
            return false
        }
        flush()
        return !isEnded
    }

    // MARK: Reading

    /// The socket is readable (or ended): one read, and every whole frame
    /// dispatched.
    func readable() {
        let reason = core.tls.map(readTLS) ?? readPlain()
        if let reason { end(reason, byClient: false) }
    }

    private func readPlain() -> ClientError? {
        do throws(SocketError) {
            switch try readSocket(core.fd, into: buffer.prepareForRead()) {
            case .bytes(let n): buffer.didRead(n)
            case .endOfFile: return core.endOfStreamReason()
            case .wouldBlock: return nil
            }
        } catch {
            return ClientError(.connectionClosed, "the connection was lost: \(error)")
        }
        return core.dispatchFrames(in: &buffer)
    }

    /// One socket read into the session, then every record it completes.
    private func readTLS(_ tls: TLSChannel) -> ClientError? {
        do throws(ClientError) {
            try tls.receiveCiphertext()
            while true {
                switch try tls.readPlaintext(into: buffer.prepareForRead()) {
                case .bytes(let n):
                    buffer.didRead(n)
                    if let fatal = core.dispatchFrames(in: &buffer) { return fatal }
                case .endOfFile:
                    return core.endOfStreamReason()
                case .wouldBlock:
                    // Reading may have made the session want to send (a
                    // TLS 1.3 KeyUpdate answer).
                    if tls.hasPendingOutput { flush() }
                    return nil
                }
            }
        } catch {
            return error
        }
    }

    // MARK: Writing

    /// Writes what the socket takes now: the bytes in `out`, then the
    /// connection's queued frames. What does not fit waits for the socket
    /// to become writable.
    func flush() {
        guard !isEnded else { return }
        do throws(ClientError) {
            while true {
                if outOffset == out.count {
                    out.removeAll(keepingCapacity: true)
                    outOffset = 0
                    try refill()
                    if out.isEmpty { break }
                }
                let result = out.withUnsafeBytes { raw in
                    Result { () throws(SocketError) in try writeSocket(core.fd, from: UnsafeRawBufferPointer(rebasing: raw[outOffset...])) }
                }
                switch result {
                case .success(.bytes(let n)):
                    outOffset += n
                case .success(.wouldBlock):
                    reportMoved()
                    try watchWrites(true)
                    return
                case .failure(let error):
                    throw ClientError(.connectionClosed, "the connection was lost: \(error)")
                }
            }
            reportMoved()
            try watchWrites(false)
        } catch {
            end(error, byClient: false)
        }
    }

    /// Fills `out` from the taken frames (taking the queue's frames when
    /// they run out), up to `coalesceBytes` or the last frame.
    private func refill() throws(ClientError) {
        while out.count < Self.coalesceBytes {
            if frameIndex == frames.count {
                frames.removeAll(keepingCapacity: true)
                frameIndex = 0
                frameOffset = 0
                let moved = self.moved
                self.moved = 0
                core.state.withLock { s in
                    s.output.wrote(moved)
                    s.output.take(into: &frames)
                }
                if frames.isEmpty { break }
            }
            if let tls = core.tls {
                let frame = frames[frameIndex]
                let taken = frame.withUnsafeBytes { raw in
                    Result { () throws(ClientError) in try tls.encrypt(UnsafeRawBufferPointer(rebasing: raw[frameOffset...])) }
                }
                let n = try taken.get()
                frameOffset += n
                moved += n
                if frameOffset == frame.count {
                    frameIndex += 1
                    frameOffset = 0
                }
                tls.takeCiphertext(appendingTo: &out)
                if n == 0 { break }  // the session's output is full: send first
            } else if out.isEmpty {
                // The first frame becomes the write buffer: no copy.
                moved += frames[frameIndex].count
                swap(&out, &frames[frameIndex])
                frameIndex += 1
            } else {
                moved += frames[frameIndex].count
                out.append(contentsOf: frames[frameIndex])
                frames[frameIndex] = []
                frameIndex += 1
            }
        }
        // What the session wants to send besides (a KeyUpdate answer).
        core.tls?.takeCiphertext(appendingTo: &out)
    }

    /// Tells the queue how many of its bytes left it.
    private func reportMoved() {
        guard moved > 0 else { return }
        let moved = self.moved
        self.moved = 0
        core.state.withLock { $0.output.wrote(moved) }
    }

    private func watchWrites(_ watch: Bool) throws(ClientError) {
        guard watch != watchingWrites else { return }
        do throws(SocketError) {
            try readiness.update(core.fd, token: core.ioToken, interest: watch ? [.readable, .writable] : .readable)
        } catch {
            throw ClientError(.ioFailed, "cannot watch the socket: \(error)")
        }
        watchingWrites = watch
    }

    // MARK: Ending

    /// Stops watching the socket, closes it and fails the connection's
    /// waiting requests with `reason`. When the client closes, a TLS
    /// connection first sends close_notify if the socket takes it at once.
    func end(_ reason: ClientError, byClient: Bool) {
        guard !isEnded else { return }
        isEnded = true
        readiness.deregister(core.fd)
        if byClient, let tls = core.tls { tls.sendCloseNotify() }
        closeSocket(core.fd)
        core.finishReading(reason)
    }
}
