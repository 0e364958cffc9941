import ChecklistModel

/// STATS (0x50): asks for the server's operational figures. Empty body.
public struct Stats: WireMessage {
    public static let messageType = MessageType.stats

    public init() {}

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> Stats { Stats() }

    public func encode(into w: inout WireWriter) {}
}
