/// Encodes WebSocket frames (RFC 6455 section 5.2). Server frames are never
/// masked; `mask` is for clients (tests, tools). Pure: no I/O.
public enum WebSocketFrameEncoder {
    /// The longest header: 2 bytes, an 8-byte length, a 4-byte mask.
    public static let maxHeaderBytes = 14

    /// The header's length for a payload of `length` bytes.
    public static func headerCount(payloadLength length: Int, masked: Bool = false) -> Int {
        (length < 126 ? 2 : length <= 0xFFFF ? 4 : 10) + (masked ? 4 : 0)
    }

    /// Appends a frame header: FIN (unless `fin` is false), `opcode`, the
    /// shortest length encoding, and `mask` (4 bytes) when given.
    public static func appendHeader(opcode: WebSocketOpcode, payloadLength length: Int, fin: Bool = true,
                                    mask: [UInt8]? = nil, to out: inout [UInt8]) {
        precondition(length >= 0 && (mask == nil || mask!.count == 4))
        out.append((fin ? 0x80 : 0) | opcode.rawValue)
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        if length < 126 {
            out.append(maskBit | UInt8(length))
        } else if length <= 0xFFFF {
            out.append(maskBit | 126)
            out.append(UInt8(length >> 8))
            out.append(UInt8(length & 0xFF))
        } else {
            out.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: UInt64(length) >> UInt64(shift))) }
        }
        if let mask { out.append(contentsOf: mask) }
    }

    /// A whole frame: header, then `payload` (masked with `mask` when given).
    public static func frame(_ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true, mask: [UInt8]? = nil) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(maxHeaderBytes + payload.count)
        appendHeader(opcode: opcode, payloadLength: payload.count, fin: fin, mask: mask, to: &out)
        if let mask {
            for (i, byte) in payload.enumerated() { out.append(byte ^ mask[i & 3]) }
        } else {
            out.append(contentsOf: payload)
        }
        return out
    }

    /// A Close frame's payload: the code (big-endian), then the UTF-8 reason.
    public static func closePayload(_ code: WebSocketCloseCode, reason: String = "") -> [UInt8] {
        var out = [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)]
        out.append(contentsOf: reason.utf8.prefix(123))
        return out
    }
}
