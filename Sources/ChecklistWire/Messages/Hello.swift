import ChecklistModel

/// HELLO (0x01): the first request of every connection.
public struct Hello: WireMessage {
    public static let messageType = MessageType.hello
    static let hasToken: UInt8 = 1 << 0
    /// Longest `token` a HELLO may carry, in UTF-8 bytes (room for a
    /// signed token, JWT, with an RSA-4096 signature and many claims).
    public static let maxTokenBytes = 8192

    public var minVersion: UInt64
    public var maxVersion: UInt64
    public var features: Features
    public var clientName: String
    /// The access token (Protocol/SPEC.md section 6.1): names the namespace
    /// of every request on the connection when the server has access control.
    public var token: String?

    public init(minVersion: UInt64 = 1, maxVersion: UInt64 = 1, features: Features = [.compression], clientName: String,
                token: String? = nil) {
        self.minVersion = minVersion
        self.maxVersion = maxVersion
        self.features = features
        self.clientName = clientName
        self.token = token
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> Hello {
        var hello = Hello(minVersion: try r.readVarint("minVersion"),
                          maxVersion: try r.readVarint("maxVersion"),
                          features: Features(rawValue: try r.readVarint("features")),
                          clientName: try r.readString("clientName"))
        // The presence byte is optional: a body that ends after clientName
        // (every HELLO written before access control existed) has no token.
        guard r.remaining > 0 else { return hello }
        let presence = try r.readPresence(known: hasToken)
        if presence & hasToken != 0 {
            let token = try r.readString("token")
            guard token.utf8.count <= maxTokenBytes else {
                throw ChecklistError(.limitExceeded, "token is longer than \(maxTokenBytes) bytes", field: "token")
            }
            hello.token = token
        }
        return hello
    }

    /// Without a token the body ends after `clientName` (no presence byte).
    public func encode(into w: inout WireWriter) {
        w.writeVarint(minVersion)
        w.writeVarint(maxVersion)
        w.writeVarint(features.rawValue)
        w.writeString(clientName)
        if let token {
            w.writeU8(Self.hasToken)
            w.writeString(token)
        }
    }
}
