import ChecklistModel

/// PONG (0x82): echoes the PING's data.
public struct Pong: WireMessage {
    public static let messageType = MessageType.pong

    public var data: [UInt8]

    public init(data: [UInt8] = []) { self.data = data }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> Pong {
        Pong(data: try r.readBytes("data"))
    }

    public func encode(into w: inout WireWriter) { w.writeBytes(data) }
}
