import ChecklistModel
import ChecklistSocket
import ChecklistWire
#if canImport(Glibc)
import Glibc
#endif

/// A blocking, byte-exact connection to the server under test. Every read
/// and write is bounded by the target's timeout, so no case can hang.
public final class ProbeConnection {
    /// One frame the server sent.
    public struct Answer: Sendable {
        public var header: FrameHeader
        public var message: ServerMessage
    }

    let fd: Int32
    let timeout: Duration
    private var buffer: [UInt8] = []
    private var isOpen = true

    public init(host: String, port: UInt16, timeout: Duration) throws {
        fd = try connectSocket(host: host, port: port)
        self.timeout = timeout
        try setTimeouts(fd, receive: timeout, send: timeout)
    }

    deinit { if isOpen { closeSocket(fd) } }

    // MARK: Sending

    public func send(_ bytes: [UInt8]) throws {
        do {
            try writeAll(fd, bytes)
        } catch {
            throw CaseFailure("sending \(bytes.count) bytes failed: \(error)")
        }
    }

    public func send(_ request: Request, id: UInt32) throws {
        try send(FrameBytes.request(request, id: id))
    }

    /// Sends each byte with its own `send(2)` (TCP_NODELAY is on, so each
    /// leaves as its own segment).
    public func sendOneByteAtATime(_ bytes: [UInt8]) throws {
        for byte in bytes { try send([byte]) }
    }

    /// Half-closes: the server reads end-of-file.
    public func shutdownSending() throws {
        do { try shutdownSocket(fd, .write) } catch { throw CaseFailure("shutdown failed: \(error)") }
    }

    /// Closes with an RST instead of a FIN (SO_LINGER with a zero timeout).
    public func reset() {
        guard isOpen else { return }
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        closeSocket(fd)
        isOpen = false
    }

    /// Closes normally.
    public func close() {
        guard isOpen else { return }
        closeSocket(fd)
        isOpen = false
    }

    // MARK: Receiving

    /// The next frame; fails if none arrives within the timeout or the
    /// connection ends first.
    public func receive() throws -> Answer {
        while true {
            if let answer = try parseBuffered() { return answer }
            switch try readMore() {
            case .data: continue
            case .closed: throw CaseFailure("the server closed the connection instead of answering")
            case .timedOut: throw CaseFailure("no answer within \(timeout)")
            }
        }
    }

    /// The next frame, which must answer `id` with a message for which
    /// `check` returns a value.
    public func receive<T>(_ id: UInt32, _ what: String, _ check: (ServerMessage) -> T?) throws -> T {
        let answer = try receive()
        guard answer.header.requestID == id else {
            throw CaseFailure("expected the answer to request \(id) (\(what)), got request id \(answer.header.requestID): \(answer.message.summary)")
        }
        guard let value = check(answer.message) else {
            throw CaseFailure("expected \(what) for request \(id), got \(answer.message.summary)")
        }
        return value
    }

    /// Expects an `ERROR` with `code` (and `field`, which must match
    /// exactly, absent included) answering `id`. Returns the error.
    @discardableResult
    public func expectError(_ id: UInt32, _ code: ChecklistError.Code, field: String? = nil) throws -> ChecklistError {
        let error = try receive(id, "ERROR \(code.name)") { message -> ChecklistError? in
            if case .error(let e) = message { return e.error }
            return nil
        }
        guard error.code == code, error.field == field else {
            throw CaseFailure("expected \(code.name)\(field.map { " field \($0)" } ?? "") for request \(id), got \(error)")
        }
        return error
    }

    /// Sends HELLO (with `token` if given) and expects HELLO_OK.
    @discardableResult
    public func handshake(token: String?, id: UInt32 = 1, name: String = "checklist-conformance/1.0") throws -> HelloOK {
        try send(.hello(Hello(features: [], clientName: name, token: token)), id: id)
        return try receive(id, "HELLO_OK") { message -> HelloOK? in
            if case .helloOK(let ok) = message { return ok }
            return nil
        }
    }

    /// Sends a PING with `id` and expects the PONG: the connection still works.
    public func expectAlive(id: UInt32 = 0xC0DE) throws {
        let data: [UInt8] = [0xC0, 0xDE, UInt8(truncatingIfNeeded: id)]
        try send(.ping(Ping(data: data)), id: id)
        _ = try receive(id, "PONG") { message -> Bool? in
            if case .pong(let p) = message, p.data == data { return true }
            return nil
        }
    }

    /// Expects the server to close the connection, with no further frame.
    public func expectClosed() throws {
        while true {
            if !buffer.isEmpty {
                let next = (try? parseBuffered()).flatMap { $0 }
                throw CaseFailure("expected the server to close the connection, got "
                                  + (next.map { "\($0.message.summary) (request \($0.header.requestID))" } ?? "\(buffer.count) more bytes"))
            }
            switch try readMore() {
            case .data: continue
            case .closed: return
            case .timedOut: throw CaseFailure("the server did not close the connection within \(timeout)")
            }
        }
    }

    /// Bytes received but not yet parsed into answers.
    var bufferedBytes: Int { buffer.count }

    enum ReadResult { case data, closed, timedOut }

    func readMore() throws -> ReadResult {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let result: SocketReadResult
        do {
            result = try chunk.withUnsafeMutableBytes { (raw) throws(SocketError) in try readSocket(fd, into: raw) }
        } catch let error as SocketError where error.isDisconnect {
            return .closed
        } catch {
            throw CaseFailure("reading failed: \(error)")
        }
        switch result {
        case .bytes(let n):
            buffer.append(contentsOf: chunk[0..<n])
            return .data
        case .endOfFile:
            return .closed
        case .wouldBlock:
            return .timedOut
        }
    }

    func parseBuffered() throws -> Answer? {
        let parsed = buffer.withUnsafeBytes { raw -> Result<(Answer, Int)?, ChecklistError> in
            switch FrameParser.next(in: raw, maxFrameBytes: .max) {
            case .needMore: return .success(nil)
            case .fatal(let e): return .failure(e)
            case let .frame(header, body, consumed):
                return Result { () throws(ChecklistError) in
                    let message = try ServerMessage.decode(header: header, body: UnsafeRawBufferPointer(rebasing: raw[body]),
                                                           maxFrameBytes: .max)
                    return (Answer(header: header, message: message), consumed)
                }
            }
        }
        do {
            guard let (answer, consumed) = try parsed.get() else { return nil }
            buffer.removeFirst(consumed)
            return answer
        } catch {
            throw CaseFailure("the server sent a frame that does not decode: \(error)")
        }
    }
}

extension ServerMessage {
    /// A one-line description for failure messages. (`if case` rather than
    /// a `switch`: later versions add messages.)
    var summary: String {
        if case .error(let e) = self { return "ERROR \(e.error)" }
        if case .lists(let l) = self { return "LISTS (\(l.lists.count) lists)" }
        if case .page(let p) = self { return "PAGE (\(p.rows.count) rows of \(p.header.total), offset \(p.header.offset))" }
        if case .patchOK(let p) = self { return "PATCH_OK revision \(p.revision)" }
        return "message type \(type)"
    }
}
