import ChecklistModel
import ChecklistStore
import ChecklistWire

/// The protocol state of one connection, free of I/O: it is handed the
/// bytes that arrived, appends every answer to `output` and says whether the
/// connection must close. The socket layer carries that out.
///
/// Owned by the connection's event-loop thread; not shared.
struct ConnectionSession {
    /// What the socket layer must do after a call to `receive`.
    enum Action: Equatable {
        /// Keep reading.
        case `continue`
        /// Send what `output` holds, then close: framing is lost.
        case closeAfterFlush
    }

    enum State {
        case awaitingHello
        case ready(version: UInt64)
    }

    private(set) var state: State = .awaitingHello
    /// Frames to send, appended by `receive`. The owner drains it.
    var output = WireWriter(capacity: 4096)
    private var encoder = FrameEncoder(compress: false)
    private let dispatcher: RequestDispatcher
    private let limits: Limits

    /// The largest frame this session accepts.
    var maxFrameBytes: UInt32 { limits.maxFrameBytes }

    init(dispatcher: RequestDispatcher, limits: Limits) {
        self.dispatcher = dispatcher
        self.limits = limits
    }

    /// Handles the whole frames at the start of `input`, stopping early once
    /// `output` holds `outputBudget` bytes (back-pressure: the caller offers
    /// the rest again when its output drained), and returns how many bytes
    /// it consumed.
    mutating func receive(_ input: UnsafeRawBufferPointer, outputBudget: Int) -> (consumed: Int, action: Action) {
        var consumed = 0
        while output.count < outputBudget {
            let rest = UnsafeRawBufferPointer(rebasing: input[consumed...])
            switch FrameParser.next(in: rest, maxFrameBytes: limits.maxFrameBytes) {
            case .needMore:
                return (consumed, .continue)
            case .fatal(let error):
                send(ErrorMessage(error), requestID: FrameHeader.pushRequestID)
                return (input.count, .closeAfterFlush)
            case let .frame(header, body, frameSize):
                handle(header: header, body: UnsafeRawBufferPointer(rebasing: rest[body]))
                consumed += frameSize
            }
        }
        return (consumed, .continue)
    }

    private mutating func handle(header: FrameHeader, body: UnsafeRawBufferPointer) {
        let request: Request
        do {
            request = try Request.decode(header: header, body: body, maxFrameBytes: limits.maxFrameBytes)
        } catch {
            send(ErrorMessage(error), requestID: header.requestID)
            return
        }
        switch (state, request) {
        case (.awaitingHello, .hello(let hello)):
            handshake(hello, requestID: header.requestID)
        case (.awaitingHello, _):
            send(ErrorMessage(ChecklistError(.helloRequired, "send HELLO before \(request.type)")), requestID: header.requestID)
        case (.ready, .hello):
            send(ErrorMessage(ChecklistError(.badState, "HELLO was already accepted on this connection")), requestID: header.requestID)
        case (.ready, _):
            dispatcher.handle(request, namespace: .default, requestID: header.requestID, into: &output, encoder: &encoder)
        }
    }

    private mutating func handshake(_ hello: Hello, requestID: UInt32) {
        guard let version = ProtocolVersions.negotiate(clientMin: hello.minVersion, clientMax: hello.maxVersion) else {
            let error = ChecklistError(.unsupportedVersion,
                                       "client offers versions \(hello.minVersion)...\(hello.maxVersion); server speaks protocol versions \(ProtocolVersions.description)",
                                       field: "minVersion")
            send(ErrorMessage(error), requestID: requestID)
            return
        }
        state = .ready(version: version)
        encoder.compress = hello.features.contains(.compression)
        send(HelloOK(version: version, features: [.compression], serverName: dispatcher.serverName, limits: limits),
             requestID: requestID)
    }

    private mutating func send<M: WireMessage>(_ message: M, requestID: UInt32) {
        encoder.append(message, requestID: requestID, to: &output)
    }
}
