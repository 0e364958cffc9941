import ChecklistModel
import ChecklistSocket
import ChecklistWire
import Synchronization

/// The shared heart of a connection: the socket, the table of requests in
/// flight, the write lock and the reader thread (see `ConnectionCore+Reader`).
/// `ChecklistConnection` is its public face. The reader thread holds the
/// core, not the connection, so dropping the last reference to the
/// connection shuts the socket down and lets the thread end.
///
/// Locking rules:
/// - `state` guards the request table, the close bookkeeping and
///   `socketOpen`. It is never held across a blocking call (`shutdown(2)`
///   does not block).
/// - `output` guards writing: one frame or batch is sent whole under it, so
///   frames never interleave. It is held during a blocking `send(2)`.
/// - Lock order: `output` before `state`; never take `output` while
///   holding `state`.
/// - Only the reader thread closes the descriptor, and only while holding
///   `output` and then `state`, after setting both "open" flags to false;
///   nobody touches `fd` once those flags are false, so a descriptor number
///   reused by the process is never written to or shut down by mistake.
final class ConnectionCore: Sendable {
    struct State {
        var table = RequestTable()
        /// False once the reader closed the descriptor; guards `shutdown`.
        var socketOpen = true
        var readerFinished = false
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
        /// The last connection-level ERROR (request id 0) the server sent,
        /// typically just before it closes the connection.
        var goodbye: ChecklistError?
        /// Receives server pushes (request id 0) on the reader thread.
        var pushHandler: (@Sendable (FrameHeader, [UInt8]) -> Void)?
    }

    let fd: Int32
    /// The TLS layer over `fd`, or nil for a plaintext connection.
    let tls: TLSChannel?
    let state = Mutex(State())
    /// True while writers may use `fd`.
    let output = Mutex(true)
    /// Whether request bodies of at least 1 KiB are compressed (after the
    /// server announced COMPRESSION).
    let compressOutgoing = Atomic<Bool>(false)
    /// The server's `maxFrameBytes` (the default until HELLO_OK arrives).
    let serverMaxFrameBytes = Atomic<UInt32>(Limits.default.maxFrameBytes)

    init(fd: Int32, tls: TLSChannel? = nil) {
        self.fd = fd
        self.tls = tls
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
                switch state.withLock({ $0.table.register(id, continuation) }) {
                case .write: write(bytes)
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
                switch state.withLock({ $0.table.registerBatch(key, continuation) }) {
                case .write: write(bytes)
                case .fail(let error): continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            state.withLock { $0.table.cancelBatch(key) }?.resume(throwing: CancellationError())
        }
    }

    /// Sends one request whose answer is handed, undecoded, to `onAnswer`
    /// on the reader thread (see `RawAnswerHandler`): for callers that decode
    /// straight into their own storage. Returns once the frame is written;
    /// if the connection is closed, `onAnswer` gets the error instead.
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
        let id = try state.withLock { (s) throws(ClientError) in try s.table.reserveRaw(onAnswer) }
        Self.setRequestID(id, of: &frame.bytes)
        write(frame.bytes)
    }

    /// Writes `id` into the request-id field of the frame in `bytes`
    /// (bytes 6 ..< 10, big-endian: Protocol/SPEC.md section 1).
    private static func setRequestID(_ id: UInt32, of bytes: inout [UInt8]) {
        for i in 0..<4 { bytes[6 + i] = UInt8(truncatingIfNeeded: id >> UInt32(24 - 8 * i)) }
    }

    private func sizeError(frameLength: Int, _ type: MessageType) -> ClientError? {
        let limit = serverMaxFrameBytes.load(ordering: .relaxed)
        guard frameLength > Int(limit) else { return nil }
        return ClientError(.requestTooLarge,
                           "request of type \(type) is \(frameLength) bytes, over the server's maxFrameBytes \(limit); not sent")
    }

    /// Writes whole frames. A failed send shuts the socket down; the reader
    /// then fails every waiting request, including the ones just written.
    private func write(_ bytes: [UInt8]) {
        output.withLock { open in
            guard open else { return }  // already closed: the waiter was failed by the reader
            do throws(ClientError) {
                try transmit(bytes)
            } catch {
                beginClose(error)
            }
        }
    }

    // MARK: Closing

    /// Sends TLS close_notify if nothing else is being written and the
    /// socket takes it at once; a closing connection never waits for it.
    func sayGoodbye() {
        guard let tls else { return }
        output.withLockIfAvailable { open in
            if open { tls.sendCloseNotify() }
        }
    }

    /// Refuses new requests and shuts the socket down, which wakes the
    /// reader; the reader then fails every waiting request with `reason`
    /// (or the first reason given) and closes the descriptor. Idempotent.
    func beginClose(_ reason: ClientError) {
        state.withLock { s in
            s.table.refuseNewRequests(reason)
            // Wakes the reader (read returns 0) and any writer blocked in send.
            if s.socketOpen { try? shutdownSocket(fd, .both) }
        }
    }

    /// Returns once the reader thread has closed the socket and failed every
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

    /// Called by the reader thread as its last act.
    func finishReading(_ reason: ClientError) {
        beginClose(reason)
        output.withLock { open in
            open = false
            state.withLock { $0.socketOpen = false }
            closeSocket(fd)
        }
        let (resumptions, waiters) = state.withLock { s in
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
    /// reader thread and must not block.
    func setPushHandler(_ handler: (@Sendable (FrameHeader, [UInt8]) -> Void)?) {
        state.withLock { $0.pushHandler = handler }
    }
}
