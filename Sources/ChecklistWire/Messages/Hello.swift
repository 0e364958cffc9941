import ChecklistModel

/// HELLO (0x01): the first request of every connection.
public struct Hello: WireMessage {
    public static let messageType = MessageType.hello

    public var minVersion: UInt64
    public var maxVersion: UInt64
    public var features: Features
    public var clientName: String

    public init(minVersion: UInt64 = 1, maxVersion: UInt64 = 1, features: Features = [.compression], clientName: String) {
        self.minVersion = minVersion
        self.maxVersion = maxVersion
        self.features = features
        self.clientName = clientName
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> Hello {
        Hello(minVersion: try r.readVarint("minVersion"),
              maxVersion: try r.readVarint("maxVersion"),
              features: Features(rawValue: try r.readVarint("features")),
              clientName: try r.readString("clientName"))
    }

    public func encode(into w: inout WireWriter) {
        w.writeVarint(minVersion)
        w.writeVarint(maxVersion)
        w.writeVarint(features.rawValue)
        w.writeString(clientName)
    }
}
