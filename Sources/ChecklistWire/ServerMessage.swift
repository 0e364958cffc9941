import ChecklistModel

/// Every frame a v1 server sends, decoded: answers and errors.
public enum ServerMessage: Sendable, Equatable {
    case helloOK(HelloOK)
    case pong(Pong)
    case lists(Lists)
    case listCreated(ListInfo)
    case listUpdated(ListInfo)
    case listDeleted(ListDeleted)
    case page(PageMessage)
    case patchOK(PatchOK)
    case statsReport(StatsReport)
    case subscribed(Subscribed)
    case unsubscribed(Unsubscribed)
    case changes(Changes)
    case exportChunk(ExportChunk)
    case importOK(ImportOK)
    case changePush(ChangePush)
    case subscriptionDropped(SubscriptionDropped)
    case error(ErrorMessage)

    /// Decodes a frame sent by a server.
    public static func decode(header: FrameHeader, body: UnsafeRawBufferPointer, maxFrameBytes: UInt32) throws(ChecklistError) -> ServerMessage {
        try FrameBody.withMessageBytes(header: header, body: body, maxFrameBytes: maxFrameBytes) { (r) throws(ChecklistError) in
            switch header.type {
            case .helloOK: return .helloOK(try .decode(from: &r))
            case .pong: return .pong(try .decode(from: &r))
            case .lists: return .lists(try .decode(from: &r))
            case .listCreated: return .listCreated(try .decode(from: &r))
            case .listUpdated: return .listUpdated(try .decode(from: &r))
            case .listDeleted: return .listDeleted(try .decode(from: &r))
            case .page: return .page(try .decode(from: &r))
            case .patchOK: return .patchOK(try .decode(from: &r))
            case .statsReport: return .statsReport(try .decode(from: &r))
            case .subscribed: return .subscribed(try .decode(from: &r))
            case .unsubscribed: return .unsubscribed(try .decode(from: &r))
            case .changes: return .changes(try .decode(from: &r))
            case .exportChunk: return .exportChunk(try .decode(from: &r))
            case .importOK: return .importOK(try .decode(from: &r))
            case .changePush: return .changePush(try .decode(from: &r))
            case .subscriptionDropped: return .subscriptionDropped(try .decode(from: &r))
            case .error: return .error(try .decode(from: &r))
            default: throw ChecklistError(.unknownMessage, "unknown server message type \(header.type)")
            }
        }
    }

    /// The frame type this message travels as.
    public var type: MessageType {
        switch self {
        case .helloOK: return .helloOK
        case .pong: return .pong
        case .lists: return .lists
        case .listCreated: return .listCreated
        case .listUpdated: return .listUpdated
        case .listDeleted: return .listDeleted
        case .page: return .page
        case .patchOK: return .patchOK
        case .statsReport: return .statsReport
        case .subscribed: return .subscribed
        case .unsubscribed: return .unsubscribed
        case .changes: return .changes
        case .exportChunk: return .exportChunk
        case .importOK: return .importOK
        case .changePush: return .changePush
        case .subscriptionDropped: return .subscriptionDropped
        case .error: return .error
        }
    }

    /// Appends this message as one frame.
    public func encode(requestID: UInt32, into w: inout WireWriter, encoder: inout FrameEncoder) {
        switch self {
        case .helloOK(let m): encoder.append(m, requestID: requestID, to: &w)
        case .pong(let m): encoder.append(m, requestID: requestID, to: &w)
        case .lists(let m): encoder.append(m, requestID: requestID, to: &w)
        case .listCreated(let m): encoder.append(m, requestID: requestID, to: &w)
        case .listUpdated(let m): encoder.append(type: .listUpdated, requestID: requestID, to: &w) { m.encode(into: &$0) }
        case .listDeleted(let m): encoder.append(m, requestID: requestID, to: &w)
        case .page(let m): encoder.append(m, requestID: requestID, to: &w)
        case .patchOK(let m): encoder.append(m, requestID: requestID, to: &w)
        case .statsReport(let m): encoder.append(m, requestID: requestID, to: &w)
        case .subscribed(let m): encoder.append(m, requestID: requestID, to: &w)
        case .unsubscribed(let m): encoder.append(m, requestID: requestID, to: &w)
        case .changes(let m): encoder.append(m, requestID: requestID, to: &w)
        case .exportChunk(let m): encoder.append(m, requestID: requestID, to: &w)
        case .importOK(let m): encoder.append(m, requestID: requestID, to: &w)
        case .changePush(let m): encoder.append(m, requestID: requestID, to: &w)
        case .subscriptionDropped(let m): encoder.append(m, requestID: requestID, to: &w)
        case .error(let m): encoder.append(m, requestID: requestID, to: &w)
        }
    }
}
