import ChecklistFrames
import ChecklistModel
import ChecklistSocket
import ChecklistTLS
import ChecklistWire
import Synchronization

/// The shared heart of a connection: its frame stream (ChecklistFrames'
/// `FrameStream`: the socket, TLS, the frame buffers), the table of
/// requests in flight, the queue of frames to write, and the I/O thread
/// that drives the stream (`IOThread`). `ChecklistConnection` is its public face.
/// The I/O thread holds the core, not the connection, so dropping the last
/// reference to the connection closes the socket and frees the core.
///
/// Nothing here blocks its caller: a request is queued (`state.output`,
/// bounded) and the I/O thread writes it when the socket takes bytes; only
/// that thread reads, writes or closes the stream.
///
/// Locking rules: `state` guards the request table, the output queue and
/// the close bookkeeping. It is never held across a system call (waking
/// the I/O thread happens after it is released).
final class ConnectionCore: Sendable {
    struct State {
        var table = RequestTable()
        /// Frames waiting for the I/O thread to write them.
        var output: OutputQueue
        /// True once the I/O thread was asked to close the socket.
        var closeRequested = false
        var readerFinished = false
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
        /// The last connection-level ERROR (request id 0) the server sent,
        /// typically just before it closes the connection.
        var goodbye: ChecklistError?
        /// Receives server pushes (request id 0) on the I/O thread.
        var pushHandler: (@Sendable (FrameHeader, [UInt8]) -> Void)?
    }

    /// The connection's frame stream (its TLS handshake done), handed to
    /// `io`'s thread, the only one that uses it from `start()` on.
    let handed: HandedStream
    /// The negotiated TLS version, or nil for a plaintext connection.
    let tlsVersion: TLSVersion?
    /// The verified subject of the server's certificate (TLS only).
    let tlsPeerSubject: String?
    /// The thread that reads and writes the socket.
    let io: IOThread
    /// The connection's key in `io`'s table.
    let ioToken: UInt64
    let state: Mutex<State>
    /// Whether request bodies of at least 1 KiB are compressed (after the
    /// server announced COMPRESSION).
    let compressOutgoing = Atomic<Bool>(false)
    /// The server's `maxFrameBytes` (the default until HELLO_OK arrives).
    let serverMaxFrameBytes = Atomic<UInt32>(Limits.default.maxFrameBytes)

    /// A core for a connected stream (its TLS handshake done, if any); the
    /// I/O thread takes it over with `start()`.
    init(stream handed: HandedStream, io: IOThread, sendQueueLimit: Int = OutputQueue.defaultLimit) {
        self.handed = handed
        self.tlsVersion = handed.stream.tls?.session.protocolVersion
        self.tlsPeerSubject = handed.stream.tls?.session.peerCertificateSubject
        self.io = io
        self.ioToken = io.nextToken()
        self.state = Mutex(State(output: OutputQueue(limit: sendQueueLimit)))
    }

    /// Hands the socket to the I/O thread, which reads it from now on and,
    /// when it ends, closes it and calls `finishReading`.
    func start() {
        io.add(self)
    }

    /// The largest frame the reader accepts: the server's limit, but never
    /// less than the protocol default.
    var receiveLimit: UInt32 {
        max(serverMaxFrameBytes.load(ordering: .relaxed), Limits.default.maxFrameBytes)
    }

    // MARK: Requests

    /// Sends one request and waits for the frame that answers it (an `ERROR`
    /// answer is returned, not thrown).
    func send(_ request: Request) async throws -> ServerMessage {
        let id = try state.withLock { (s) throws(ClientError) in try s.table.reserve() }
        var frame = WireWriter(capacity: 64)
        var encoder = FrameEncoder(compress: compressOutgoing.load(ordering: .relaxed))
        request.encode(requestID: id, into: &frame, encoder: &encoder)
        if let error = sizeError(frameLength: frame.count - 4, request.type) {
            state.withLock { $0.table.release(id) }
            throw error
        }
        let bytes = frame.bytes
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: AnswerContinuation) in
                let registered = state.withLock { s -> (RequestTable.Registration, flush: Bool) in
                    if let full = s.output.refusal(forBytes: bytes.count) {
                        s.table.release(id)
                        return (.fail(full), false)
                    }
                    let registration = s.table.register(id, continuation)
                    guard case .write = registration else { return (registration, false) }
                    return (.write, s.output.append(bytes))
                }
                switch registered.0 {
                case .write: if registered.flush { io.requestFlush(self) }
                case .fail(let error): continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            state.withLock { $0.table.cancel(id) }?.resume(throwing: CancellationError())
        }
    }

    /// Sends all `requests` with one write and waits for every answer, in
    /// request order.
    func sendBatch(_ requests: [Request]) async throws -> [ServerMessage] {
        if requests.isEmpty { return [] }
        let (key, ids) = try state.withLock { (s) throws(ClientError) in try s.table.reserveBatch(count: requests.count) }
        var frames = WireWriter(capacity: requests.count * 32)
        var encoder = FrameEncoder(compress: compressOutgoing.load(ordering: .relaxed))
        for (request, id) in zip(requests, ids) {
            let start = frames.count
            request.encode(requestID: id, into: &frames, encoder: &encoder)
            if let error = sizeError(frameLength: frames.count - start - 4, request.type) {
                state.withLock { $0.table.releaseBatch(key) }
                throw error
            }
        }
        let bytes = frames.bytes
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: BatchContinuation) in
                let registered = state.withLock { s -> (RequestTable.Registration, flush: Bool) in
                    if let full = s.output.refusal(forBytes: bytes.count) {
                        s.table.releaseBatch(key)
                        return (.fail(full), false)
                    }
                    let registration = s.table.registerBatch(key, continuation)
                    guard case .write = registration else { return (registration, false) }
                    return (.write, s.output.append(bytes))
                }
                switch registered.0 {
                case .write: if registered.flush { io.requestFlush(self) }
                case .fail(let error): continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            state.withLock { $0.table.cancelBatch(key) }?.resume(throwing: CancellationError())
        }
    }

    /// Sends one request whose answer is handed, undecoded, to `onAnswer`
    /// on the I/O thread (see `RawAnswerHandler`): for callers that decode
    /// straight into their own storage. Returns once the frame is queued
    /// (the I/O thread writes it); if the connection closes first,
    /// `onAnswer` gets the error instead. Throws (and never calls
    /// `onAnswer`) when the request is refused: too large, the send queue
    /// full, or the connection closing.
    /// `compress: false` never compresses the frame (for bodies that are
    /// compressed already, like snapshot data).
    func send(_ request: Request, compress: Bool = true, onAnswer: @escaping RawAnswerHandler) throws(ClientError) {
        // Encoded before an id is chosen (the id does not change the frame's
        // size), so that a refused request never had a handler in the table:
        // one lock, and `onAnswer` is called exactly once or not at all.
        var frame = WireWriter(capacity: 64)
        var encoder = FrameEncoder(compress: compress && compressOutgoing.load(ordering: .relaxed))
        request.encode(requestID: 0, into: &frame, encoder: &encoder)
        if let error = sizeError(frameLength: frame.count - 4, request.type) { throw error }
        let flush = try state.withLock { (s) throws(ClientError) -> Bool in
            if let full = s.output.refusal(forBytes: frame.count) { throw full }
            let id = try s.table.reserveRaw(onAnswer)
            FrameHeader.setRequestID(id, in: &frame)
            return s.output.append(frame.bytes)
        }
        if flush { io.requestFlush(self) }
    }

    private func sizeError(frameLength: Int, _ type: MessageType) -> ClientError? {
        let limit = serverMaxFrameBytes.load(ordering: .relaxed)
        guard frameLength > Int(limit) else { return nil }
        return ClientError(.requestTooLarge,
                           "request of type \(type) is \(frameLength) bytes, over the server's maxFrameBytes \(limit); not sent")
    }

    // MARK: Closing

    /// Refuses new requests and asks the I/O thread to close the socket
    /// (after a TLS close_notify, if the socket takes it at once); that
    /// thread then fails every waiting request with `reason` (or the first
    /// reason given). Idempotent; never blocks.
    func beginClose(_ reason: ClientError) {
        let ask = state.withLock { s in
            s.table.refuseNewRequests(reason)
            defer { s.closeRequested = true }
            return !s.closeRequested && !s.readerFinished
        }
        if ask { io.requestClose(self) }
    }

    /// Returns once the I/O thread has closed the socket and failed every
    /// waiting request.
    func waitUntilClosed() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let finished = state.withLock { s in
                if !s.readerFinished { s.closeWaiters.append(continuation) }
                return s.readerFinished
            }
            if finished { continuation.resume() }
        }
    }

    /// True once closing has begun (new requests are refused).
    var isClosing: Bool {
        state.withLock { $0.table.closeReason != nil }
    }

    /// The reason new requests are refused, once closing has begun.
    var closeReason: ClientError? {
        state.withLock { $0.table.closeReason }
    }

    /// Called by the I/O thread as its last act for this connection, once
    /// it closed the socket: fails every waiting request with `reason` (or
    /// the first reason given to `beginClose`) and wakes `waitUntilClosed`.
    func finishReading(_ reason: ClientError) {
        let (resumptions, waiters) = state.withLock { s in
            s.table.refuseNewRequests(reason)
            let resumptions = s.table.close(reason)
            s.readerFinished = true
            let waiters = s.closeWaiters
            s.closeWaiters = []
            return (resumptions, waiters)
        }
        for resumption in resumptions { resumption.run() }
        for waiter in waiters { waiter.resume() }
    }

    // MARK: Pushes

    /// Installs (or removes) the receiver of server pushes. It runs on the
    /// I/O thread and must not block.
    func setPushHandler(_ handler: (@Sendable (FrameHeader, [UInt8]) -> Void)?) {
        state.withLock { $0.pushHandler = handler }
    }
}

/// A `FrameStream` handed from the thread that connected it to the I/O
/// thread. Sendable by hand-over: the connecting thread builds the stream
/// (TCP connect, TLS handshake) and reads what `ConnectionCore.init` keeps
/// of it, then never touches it again; from `ConnectionCore.start()` on only
/// the I/O thread uses it (or, if that thread failed before taking it, the
/// thread that closes it in its place, `IOThread.hand`).
struct HandedStream: @unchecked Sendable {
    let stream: FrameStream
}
