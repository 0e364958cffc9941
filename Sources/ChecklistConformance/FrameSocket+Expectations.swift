import ChecklistModel
import ChecklistFrames
import ChecklistWire

/// The conformance cases' checks on a connection: each throws a
/// `CaseFailure` that says what was expected and what came.
extension FrameSocket {
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

    /// HELLO as the conformance runner sends it: no optional features, so
    /// every answer arrives uncompressed. Expects HELLO_OK.
    @discardableResult
    public func handshake(token: String?, id: UInt32 = 1, name: String = "checklist-conformance/1.0") throws -> HelloOK {
        try handshake(features: [], token: token, id: id, name: name)
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
        guard try !isClosedByServer() else { return }
        let next = (try? bufferedAnswer()).flatMap { $0 }
        throw CaseFailure("expected the server to close the connection, got "
                          + (next.map { "\($0.message.summary) (request \($0.header.requestID))" } ?? "\(bufferedByteCount) more bytes"))
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
