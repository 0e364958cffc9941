import ChecklistModel
import ChecklistWire

/// The frames a connection owes its client, and what the answer being
/// written is. Every answer is written through it, so its message kind and
/// ERROR code are known as it is written: nothing reads an answer back from
/// its (possibly compressed) bytes.
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

    /// Bytes written and not yet drained.
    var count: Int { output.count }

    /// Appends the answer `message`.
    mutating func append<M: WireMessage>(_ message: M, requestID: UInt32) {
        encoder.append(message, requestID: requestID, to: &output)
        noteAnswer(M.messageType, error: nil)
    }

    /// Appends an answer of type `type` whose body `body` writes.
    mutating func append(type: MessageType, requestID: UInt32, body: (inout WireWriter) -> Void) {
        encoder.append(type: type, requestID: requestID, to: &output, body: body)
        noteAnswer(type, error: nil)
    }

    /// Appends the ERROR answer `error`.
    mutating func fail(_ error: ChecklistError, requestID: UInt32) {
        encoder.append(ErrorMessage(error), requestID: requestID, to: &output)
        noteAnswer(.error, error: error.code)
    }

    /// Appends an answer already encoded as a whole frame of type `type`
    /// (an EXPORT_CHUNK made by a transfer worker).
    mutating func appendEncoded(_ frame: [UInt8], type: MessageType) {
        if output.count == 0 {
            output.bytes = frame  // the common case: no copy
        } else {
            output.bytes.append(contentsOf: frame)
        }
        noteAnswer(type, error: nil)
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

    private mutating func noteAnswer(_ kind: MessageType, error: ChecklistError.Code?) {
        lastKind = kind
        lastErrorCode = error
    }
}
