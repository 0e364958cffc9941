import ChecklistFrames
import ChecklistIO
import ChecklistSocket

/// One connection as the I/O thread serves it: the policy of the client
/// library over the connection's `FrameStream` (ChecklistFrames' frame core,
/// shared with every other client of the project). A readable socket gets
/// one read and its frames dispatched to the connection's waiters; frames
/// queued by callers (`ConnectionCore.state.output`) are moved into the
/// stream, up to `coalesceBytes` at a time, and written as far as the
/// socket takes them; the socket is watched for writability only while
/// bytes wait. Touched only by the I/O thread.
final class ConnectionIO<R: Readiness> {
    /// Frames are gathered into one write up to this many bytes.
    static var coalesceBytes: Int { 64 << 10 }

    let core: ConnectionCore
    private let stream: FrameStream
    private let readiness: R
    /// Frames taken from the connection's queue and not yet moved into the
    /// stream: `frames[frameIndex...]`.
    private var frames: [[UInt8]] = []
    private var frameIndex = 0
    /// Frame bytes moved into the stream since the queue was told.
    private var moved = 0
    /// Whether the readiness layer reports this socket when writable.
    private var watchingWrites = false
    /// True once the socket is closed and the core told.
    private(set) var isEnded = false

    init(_ core: ConnectionCore, readiness: R) {
        self.core = core
        self.stream = core.handed.stream
        self.readiness = readiness
    }

    /// Watches the socket and writes what was queued before. Returns false
    /// (the connection ended) if that failed.
    func register() -> Bool {
        do throws(SocketError) {
            try readiness.register(stream.fd, token: core.ioToken, interest: .readable)
        } catch {
            isEnded = true
            stream.close(notify: false)
            core.finishReading(ClientError(.ioFailed, "cannot watch the socket: \(error)"))
            return false
        }
        flush()
        return !isEnded
    }

    // MARK: Reading

    /// The socket is readable (or ended): one read, and every whole frame
    /// dispatched.
    func readable() {
        let step: FrameStream.ReadStep
        do throws(FrameStreamError) {
            step = try stream.readAvailable()
        } catch {
            return end(ClientError(error), byClient: false)
        }
        if let fatal = core.dispatchFrames(from: stream) { return end(fatal, byClient: false) }
        if step == .endOfFile { return end(core.endOfStreamReason(), byClient: false) }
        // Reading may have made the TLS session want to send (a KeyUpdate answer).
        if stream.tls?.hasPendingOutput == true { flush() }
    }

    // MARK: Writing

    /// Writes what the socket takes now: the bytes in the stream, then the
    /// connection's queued frames. What does not fit waits for the socket
    /// to become writable.
    func flush() {
        guard !isEnded else { return }
        do throws(ClientError) {
            while true {
                let more = refill()
                let step: FrameStream.FlushStep
                do throws(FrameStreamError) { step = try stream.flush() } catch { throw ClientError(error) }
                if !step.isDone {
                    reportMoved()
                    try watchWrites(true)
                    return
                }
                if !more { break }
            }
            reportMoved()
            try watchWrites(false)
        } catch {
            end(error, byClient: false)
        }
    }

    /// Moves taken frames into the stream (taking the queue's frames when
    /// they run out) until it holds `coalesceBytes`. Returns false when the
    /// queue had no more.
    private func refill() -> Bool {
        while stream.queuedBytes < Self.coalesceBytes {
            if frameIndex == frames.count {
                frames.removeAll(keepingCapacity: true)
                frameIndex = 0
                let moved = self.moved
                self.moved = 0
                core.state.withLock { s in
                    s.output.wrote(moved)
                    s.output.take(into: &frames)
                }
                if frames.isEmpty { return false }
            }
            // The stream's own bound is off (`sendLimit: .max`): the queue bounds.
            try? stream.enqueue(frames[frameIndex])
            moved += frames[frameIndex].count
            frames[frameIndex] = []
            frameIndex += 1
        }
        return true
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
            try readiness.update(stream.fd, token: core.ioToken, interest: watch ? [.readable, .writable] : .readable)
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
        readiness.deregister(stream.fd)
        stream.close(notify: byClient)
        core.finishReading(reason)
    }
}
