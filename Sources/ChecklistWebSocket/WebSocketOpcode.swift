/// A frame's opcode (RFC 6455 section 5.2): the low four bits of its first byte.
public struct WebSocketOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x0F }

    /// Continues the message a text or binary frame without FIN began.
    public static let continuation = WebSocketOpcode(rawValue: 0x0)
    /// UTF-8 text: refused by the checklists subprotocol (close 1003).
    public static let text = WebSocketOpcode(rawValue: 0x1)
    /// The protocol's bytes.
    public static let binary = WebSocketOpcode(rawValue: 0x2)
    public static let close = WebSocketOpcode(rawValue: 0x8)
    public static let ping = WebSocketOpcode(rawValue: 0x9)
    public static let pong = WebSocketOpcode(rawValue: 0xA)

    /// Close, ping and pong: at most 125 payload bytes, never fragmented.
    public var isControl: Bool { rawValue & 0x8 != 0 }
    /// 0x3-0x7 and 0xB-0xF have no meaning in RFC 6455.
    public var isReserved: Bool { !(rawValue <= 0x2 || (rawValue >= 0x8 && rawValue <= 0xA)) }

    public var description: String {
        switch self {
        case .continuation: "continuation"
        case .text: "text"
        case .binary: "binary"
        case .close: "close"
        case .ping: "ping"
        case .pong: "pong"
        default: "reserved(0x\(String(rawValue, radix: 16)))"
        }
    }
}
