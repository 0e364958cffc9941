import ChecklistModel
import ChecklistWire

extension ConnectionCore {
    /// Dispatches every whole frame in `buffer` and consumes it. Returns
    /// the reason to close when the server broke framing.
    func dispatchFrames(in buffer: inout ReadBuffer) -> ClientError? {
        while true {
            switch FrameParser.next(in: buffer.readable, maxFrameBytes: receiveLimit) {
            case .needMore:
                return nil
            case .fatal(let error):
                return ClientError(.connectionClosed, "the connection was closed: the server broke framing (\(error))")
            case .frame(let header, let body, let consumed):
                dispatch(header, UnsafeRawBufferPointer(rebasing: buffer.readable[body]))
                buffer.consume(consumed)
            }
        }
    }

    func endOfStreamReason() -> ClientError {
        if let goodbye = state.withLock({ $0.goodbye }) {
            return ClientError(.connectionClosed, "the server closed the connection: \(goodbye)")
        }
        return ClientError(.connectionClosed, "the server closed the connection")
    }

    /// Hands one frame to whoever waits for it.
    private func dispatch(_ header: FrameHeader, _ body: UnsafeRawBufferPointer) {
        if header.requestID == FrameHeader.pushRequestID {
            dispatchPush(header, body)
            return
        }
        if let handler = state.withLock({ $0.table.takeRawHandler(header.requestID) }) {
            handler(.success((header, body)))
            return
        }
        let result: Result<ServerMessage, ClientError>
        do {
            result = .success(try ServerMessage.decode(header: header, body: body, maxFrameBytes: receiveLimit))
        } catch {
            result = .failure(ClientError(.protocolViolation,
                                          "cannot decode the answer to request \(header.requestID) (type \(header.type)): \(error)"))
        }
        state.withLock { $0.table.deliver(header.requestID, result) }.run()
    }

    /// A frame with request id 0: a connection-level ERROR (kept as the
    /// reason for an imminent close) or a push for the push handler.
    private func dispatchPush(_ header: FrameHeader, _ body: UnsafeRawBufferPointer) {
        if header.type == .error,
           case .error(let message)? = try? ServerMessage.decode(header: header, body: body, maxFrameBytes: receiveLimit) {
            state.withLock { $0.goodbye = message.error }
        }
        if let handler = state.withLock({ $0.pushHandler }) {
            handler(header, Array(body))
        }
    }
}

/// A connection's receive buffer on the I/O thread: bytes read but not yet parsed, at
/// `storage[start..<end]`. Grows to hold one whole frame (at most the frame
/// limit, checked by `FrameParser` before it asks for more) and shrinks back
/// when it empties, so it stays bounded.
struct ReadBuffer: ~Copyable {
    static let defaultCapacity = 64 << 10
    /// Keep at least this much room for a `read`.
    static let minimumRead = 4096

    private var storage: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0

    init() {
        storage = .allocate(byteCount: Self.defaultCapacity, alignment: 16)
    }

    deinit { storage.deallocate() }

    /// The unparsed bytes. Valid until the next mutating call.
    var readable: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: storage[start..<end])
    }

    mutating func consume(_ count: Int) {
        start += count
        if start == end {
            start = 0
            end = 0
            if storage.count > 16 * Self.defaultCapacity {
                storage.deallocate()
                storage = .allocate(byteCount: Self.defaultCapacity, alignment: 16)
            }
        }
    }

    /// Free space after the unparsed bytes, large enough for the rest of the
    /// frame in progress (whose length prefix the parser already accepted).
    mutating func prepareForRead() -> UnsafeMutableRawBufferPointer {
        let pending = end - start
        var wanted = Self.minimumRead
        if pending >= 4 {
            let length = Int(readable.u32BE(at: 0))
            wanted = max(wanted, 4 + length - pending)
        }
        if storage.count - end < wanted && start > 0 {
            // Move the unparsed bytes to the front.
            if pending > 0 {
                (storage.baseAddress! + 0).copyMemory(from: storage.baseAddress! + start, byteCount: pending)
            }
            start = 0
            end = pending
        }
        if storage.count - end < wanted {
            let capacity = (pending + wanted + Self.defaultCapacity - 1) / Self.defaultCapacity * Self.defaultCapacity
            let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
            if pending > 0 { grown.baseAddress!.copyMemory(from: storage.baseAddress! + start, byteCount: pending) }
            storage.deallocate()
            storage = grown
            start = 0
            end = pending
        }
        return UnsafeMutableRawBufferPointer(rebasing: storage[end...])
    }

    mutating func didRead(_ count: Int) {
        end += count
    }
}
