import ChecklistModel

/// CHANGE (0xE0), a push (request id 0): one committed change of a list the
/// connection subscribed to. Its body is one **ListChange**.
public struct ChangePush: WireMessage {
    public static let messageType = MessageType.changePush

    public var change: ListChange

    public init(_ change: ListChange) {
        self.change = change
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> ChangePush {
        ChangePush(try ListChange.decode(from: &r))
    }

    public func encode(into w: inout WireWriter) {
        change.encode(into: &w)
    }
}
