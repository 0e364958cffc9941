import ChecklistModel

/// PING (0x02): `data` that the PONG echoes.
public struct Ping: WireMessage {
    public static let messageType = MessageType.ping
    /// Longest `data` a PING may carry.
    public static let maxDataBytes = 1024

    public var data: [UInt8]

    public init(data: [UInt8] = []) { self.data = data }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> Ping {
        let data = try r.readByteSlice("data")
        guard data.count <= maxDataBytes else {
            throw ChecklistError(.limitExceeded, "PING data is longer than \(maxDataBytes) bytes", field: "data")
        }
        return Ping(data: Array(data))
    }

    public func encode(into w: inout WireWriter) { w.writeBytes(data) }
}
