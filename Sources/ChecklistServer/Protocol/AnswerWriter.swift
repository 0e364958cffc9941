import ChecklistModel
import ChecklistWire

/// The frames a connection owes its client, and what the answer being
/// written is. Every answer is written through it, so its message kind,
/// request id, ERROR code and (for a PATCH_OK) the list and revision it
/// reports are known as it is written: nothing reads an answer back from
/// its (possibly compressed) bytes, not even to replace one held for
/// durability (`HeldAnswerBytes`).
///
/// Owned by the connection's session, on its event-loop thread.
struct AnswerWriter {
    /// The frames to send, in order; the connection drains them.
    private(set) var output = WireWriter(capacity: 0)
    /// Frames the answers; compresses them once the client announced COMPRESSION.
    var encoder = FrameEncoder(compress: false)
    /// Whether the client announced CLIENT_KEYS in HELLO: only then do the
    /// PAGE rows written carry items' client keys (Protocol/SPEC.md 6.1).
    var sendsClientKeys = false
    /// The message type of the last answer written.
    private(set) var lastKind: MessageType?
    /// The code of the last answer, when it was an ERROR.
    private(set) var lastErrorCode: ChecklistError.Code?
    /// The request id of the last answer.
    private(set) var lastRequestID: UInt32 = FrameHeader.pushRequestID
    /// What the last answer reports, when it was a PATCH_OK.
    private(set) var lastPatched: PatchedRevision?

    /// Bytes written and not yet drained.
    var count: Int { output.count }

    /// Appends the answer `message`.
    mutating func append<M: WireMessage>(_ message: M, requestID: UInt32) {
        encoder.append(message, requestID: requestID, to: &output)
        noteAnswer(M.messageType, requestID: requestID, error: nil)
    }

    /// Appends the answer PATCH_OK, noting the list and revision it
    /// reports (a held one is replaced when its commit is rebased). Chosen
    /// over the generic `append` for a `PatchOK`.
    mutating func append(_ message: PatchOK, requestID: UInt32) {
        // Sized, then framed in one reservation: no generic, per-field appends.
        encoder.append(type: PatchOK.messageType, requestID: requestID, bodyBytes: message.encodedBytes, to: &output) {
            message.write(into: &$0)
        }
        noteAnswer(.patchOK, requestID: requestID, error: nil)
        lastPatched = PatchedRevision(list: message.list, revision: message.revision)
    }

    /// Appends an answer of type `type` whose body `body` writes.
    mutating func append(type: MessageType, requestID: UInt32, body: (inout WireWriter) -> Void) {
        encoder.append(type: type, requestID: requestID, to: &output, body: body)
        noteAnswer(type, requestID: requestID, error: nil)
    }

    /// Appends the ERROR answer `error`.
    mutating func fail(_ error: ChecklistError, requestID: UInt32) {
        encoder.append(ErrorMessage(error), requestID: requestID, to: &output)
        noteAnswer(.error, requestID: requestID, error: error.code)
    }

    /// Appends an answer already encoded as a whole frame of type `type`
    /// under `requestID` (an EXPORT_CHUNK made by a transfer worker).
    mutating func appendEncoded(_ frame: [UInt8], type: MessageType, requestID: UInt32) {
        if output.count == 0 {
            output.bytes = frame  // the common case: no copy
        } else {
            output.bytes.append(contentsOf: frame)
        }
        noteAnswer(type, requestID: requestID, error: nil)
    }

    /// Appends an encoded frame that follows an answer and is not one
    /// (SUBSCRIBE's catch-up pushes).
    mutating func appendPush(_ frame: [UInt8]) {
        output.bytes.append(contentsOf: frame)
    }

    /// Hands the bytes written to `send`, then forgets them. `send` may
    /// take the array itself and leave another (empty) buffer in its place
    /// (`SocketConnection.write(taking:)`): the next answers are written there.
    mutating func drain(_ send: (inout [UInt8]) -> Void) {
        guard output.count > 0 else { return }
        send(&output.bytes)
        output.reset()
    }

    /// Gives the buffer back while nothing is owed: an idle connection
    /// should cost no buffer memory; the next answer makes one.
    mutating func releaseBuffer() {
        if output.count == 0 && output.bytes.capacity > 0 { output = WireWriter(capacity: 0) }
    }

    private mutating func noteAnswer(_ kind: MessageType, requestID: UInt32, error: ChecklistError.Code?) {
        lastKind = kind
        lastRequestID = requestID
        lastErrorCode = error
        lastPatched = nil
    }
}

/// What a PATCH_OK reports: the list and the revision the patch gave it.
struct PatchedRevision: Hashable, Sendable {
    var list: ListID
    var revision: Revision
}
