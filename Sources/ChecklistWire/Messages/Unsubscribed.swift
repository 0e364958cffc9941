import ChecklistModel

/// UNSUBSCRIBED (0xB1): the answer to UNSUBSCRIBE. Empty body; no CHANGE
/// push for those lists follows it.
public struct Unsubscribed: WireMessage {
    public static let messageType = MessageType.unsubscribed

    public init() {}

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> Unsubscribed { Unsubscribed() }

    public func encode(into w: inout WireWriter) {}
}
