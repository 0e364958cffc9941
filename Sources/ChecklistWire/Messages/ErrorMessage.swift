import ChecklistModel

/// ERROR (0xFF): the answer to any failed request.
public struct ErrorMessage: WireMessage {
    public static let messageType = MessageType.error
    static let hasField: UInt8 = 1 << 0
    static let hasRevision: UInt8 = 1 << 1
    static let hasRetryAfter: UInt8 = 1 << 2

    public var error: ChecklistError

    public init(_ error: ChecklistError) { self.error = error }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> ErrorMessage {
        let code = try r.readCount("code", max: Int(UInt16.max))
        let presence = try r.readPresence(known: hasField | hasRevision | hasRetryAfter)
        let message = try r.readString("message")
        let field = presence & hasField != 0 ? try r.readString("field") : nil
        let revision = presence & hasRevision != 0 ? try r.readVarint("revision") : nil
        let retryAfter = presence & hasRetryAfter != 0 ? try r.readVarint("retryAfterMs") : nil
        return ErrorMessage(ChecklistError(ChecklistError.Code(rawValue: UInt16(code)), message,
                                           field: field, revision: revision, retryAfterMilliseconds: retryAfter))
    }

    public func encode(into w: inout WireWriter) {
        w.writeVarint(UInt64(error.code.rawValue))
        w.writeU8((error.field != nil ? Self.hasField : 0) | (error.revision != nil ? Self.hasRevision : 0)
                  | (error.retryAfterMilliseconds != nil ? Self.hasRetryAfter : 0))
        w.writeString(error.message)
        if let field = error.field { w.writeString(field) }
        if let revision = error.revision { w.writeVarint(revision) }
        if let retryAfter = error.retryAfterMilliseconds { w.writeVarint(retryAfter) }
    }
}
