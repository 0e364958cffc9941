import ChecklistModel

/// HELLO_OK (0x81): the chosen version, the server's limits and features.
public struct HelloOK: WireMessage {
    public static let messageType = MessageType.helloOK

    public var version: UInt64
    public var features: Features
    public var serverName: String
    public var limits: Limits

    public init(version: UInt64, features: Features, serverName: String, limits: Limits) {
        self.version = version
        self.features = features
        self.serverName = serverName
        self.limits = limits
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> HelloOK {
        let version = try r.readVarint("version")
        let features = Features(rawValue: try r.readVarint("features"))
        let name = try r.readString("serverName")
        let limits = Limits(maxFrameBytes: UInt32(try r.readCount("maxFrameBytes", max: Int(UInt32.max))),
                            maxPageRows: UInt32(try r.readCount("maxPageRows", max: Int(UInt32.max))),
                            maxTextBytes: UInt32(try r.readCount("maxTextBytes", max: Int(UInt32.max))),
                            maxBatchOps: UInt32(try r.readCount("maxBatchOps", max: Int(UInt32.max))))
        return HelloOK(version: version, features: features, serverName: name, limits: limits)
    }

    public func encode(into w: inout WireWriter) {
        w.writeVarint(version)
        w.writeVarint(features.rawValue)
        w.writeString(serverName)
        w.writeVarint(UInt64(limits.maxFrameBytes))
        w.writeVarint(UInt64(limits.maxPageRows))
        w.writeVarint(UInt64(limits.maxTextBytes))
        w.writeVarint(UInt64(limits.maxBatchOps))
    }
}
