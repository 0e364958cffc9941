import ChecklistModel

/// Every request a v1 server understands, decoded from one frame.
public enum Request: Sendable, Equatable {
    case hello(Hello)
    case ping(Ping)
    case listLists(ListLists)
    case createList(CreateList)
    case updateList(UpdateList)
    case deleteList(DeleteList)
    case getPage(GetPage)
    case patch(Patch)
    case stats(Stats)
    case subscribe(Subscribe)
    case unsubscribe(Unsubscribe)
    case changesSince(ChangesSince)
    case export(Export)
    case `import`(Import)

    /// Decodes a request frame. Unknown types are `UNKNOWN_MESSAGE`; bad
    /// flags or bodies are `BAD_FIELD`; the connection survives both.
    public static func decode(header: FrameHeader, body: UnsafeRawBufferPointer, maxFrameBytes: UInt32) throws(ChecklistError) -> Request {
        try FrameBody.withMessageBytes(header: header, body: body, maxFrameBytes: maxFrameBytes) { (r) throws(ChecklistError) in
            switch header.type {
            case .hello: return .hello(try .decode(from: &r))
            case .ping: return .ping(try .decode(from: &r))
            case .listLists: return .listLists(try .decode(from: &r))
            case .createList: return .createList(try .decode(from: &r))
            case .updateList: return .updateList(try .decode(from: &r))
            case .deleteList: return .deleteList(try .decode(from: &r))
            case .getPage: return .getPage(try .decode(from: &r))
            case .patch: return .patch(try .decode(from: &r))
            case .stats: return .stats(try .decode(from: &r))
            case .subscribe: return .subscribe(try .decode(from: &r))
            case .unsubscribe: return .unsubscribe(try .decode(from: &r))
            case .changesSince: return .changesSince(try .decode(from: &r))
            case .export: return .export(try .decode(from: &r))
            case .import: return .import(try .decode(from: &r))
            default: throw ChecklistError(.unknownMessage, "unknown request type \(header.type)")
            }
        }
    }

    /// The message type of this request.
    public var type: MessageType {
        switch self {
        case .hello: return .hello
        case .ping: return .ping
        case .listLists: return .listLists
        case .createList: return .createList
        case .updateList: return .updateList
        case .deleteList: return .deleteList
        case .getPage: return .getPage
        case .patch: return .patch
        case .stats: return .stats
        case .subscribe: return .subscribe
        case .unsubscribe: return .unsubscribe
        case .changesSince: return .changesSince
        case .export: return .export
        case .import: return .import
        }
    }

    /// Appends this request as one frame.
    public func encode(requestID: UInt32, into w: inout WireWriter, encoder: inout FrameEncoder) {
        switch self {
        case .hello(let m): encoder.append(m, requestID: requestID, to: &w)
        case .ping(let m): encoder.append(m, requestID: requestID, to: &w)
        case .listLists(let m): encoder.append(m, requestID: requestID, to: &w)
        case .createList(let m): encoder.append(m, requestID: requestID, to: &w)
        case .updateList(let m): encoder.append(m, requestID: requestID, to: &w)
        case .deleteList(let m): encoder.append(m, requestID: requestID, to: &w)
        case .getPage(let m): encoder.append(m, requestID: requestID, to: &w)
        case .patch(let m): encoder.append(m, requestID: requestID, to: &w)
        case .stats(let m): encoder.append(m, requestID: requestID, to: &w)
        case .subscribe(let m): encoder.append(m, requestID: requestID, to: &w)
        case .unsubscribe(let m): encoder.append(m, requestID: requestID, to: &w)
        case .changesSince(let m): encoder.append(m, requestID: requestID, to: &w)
        case .export(let m): encoder.append(m, requestID: requestID, to: &w)
        case .import(let m): encoder.append(m, requestID: requestID, to: &w)
        }
    }
}
