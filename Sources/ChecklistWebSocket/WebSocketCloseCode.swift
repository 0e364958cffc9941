/// The status code of a Close frame (RFC 6455 section 7.4.1).
public struct WebSocketCloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 1000: the purpose of the connection is fulfilled.
    public static let normal = WebSocketCloseCode(rawValue: 1000)
    /// 1001: the server is going away (shutting down) or the peer went silent.
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    /// 1002: a frame broke RFC 6455 (unmasked, reserved bits or opcode,
    /// fragmented or oversized control frame, a stray continuation).
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    /// 1003: a data type the endpoint does not accept (text frames, here).
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// 1007: data not consistent with its type (a close reason that is not UTF-8).
    public static let invalidPayload = WebSocketCloseCode(rawValue: 1007)
    /// 1009: a message larger than the endpoint takes.
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    /// 1011: the server met an unexpected condition.
    public static let internalError = WebSocketCloseCode(rawValue: 1011)

    /// Whether a peer may send this code in a Close frame: 1000-1003,
    /// 1007-1014 and 3000-4999 (1004-1006 and 1015 are reserved for
    /// reporting, never sent; the rest is unassigned).
    public var isSendable: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    public var description: String { String(rawValue) }
}
