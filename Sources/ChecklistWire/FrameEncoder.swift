import ChecklistModel

/// Writes whole frames: header, body and, where asked and worth it,
/// compression of the body (`FrameDeflater`).
public struct FrameEncoder: Sendable {
    /// Bodies shorter than this are never compressed (Protocol/SPEC.md section 1).
    public static let compressionThreshold = 1024

    /// Whether bodies of at least `compressionThreshold` bytes are compressed.
    public var compress: Bool

    public init(compress: Bool = false) {
        self.compress = compress
    }

    /// Appends one frame holding `message` to `out`.
    public mutating func append<M: WireMessage>(_ message: M, requestID: UInt32, to out: inout WireWriter) {
        append(type: M.messageType, requestID: requestID, to: &out) { message.encode(into: &$0) }
    }

    /// Appends one frame whose body `body` writes, to `out`. The body is
    /// written in place; if compression applies and pays, it is replaced by
    /// its compressed form.
    public mutating func append(type: MessageType, requestID: UInt32, to out: inout WireWriter,
                                body: (inout WireWriter) -> Void) {
        let start = out.count
        out.writeReserved(count: FrameHeader.size) { c in
            for _ in 0..<4 { c.writeU8(0) }  // the length, filled in below
            c.writeU8(type.rawValue)
            c.writeU8(0)
            for shift in stride(from: 24, through: 0, by: -8) { c.writeU8(UInt8(truncatingIfNeeded: requestID >> UInt32(shift))) }
        }
        let bodyStart = out.count
        body(&out)
        let bodyCount = out.count - bodyStart
        // Compressed where the output is (`FrameDeflater`): no copy of the
        // body first, none of the stream but over the body it replaces.
        if compress && bodyCount >= Self.compressionThreshold && FrameDeflater.compressInPlace(&out.bytes, from: bodyStart) {
            out.bytes[start + 5] = FrameFlags.compressed.rawValue
        }
        out.writeU32BE(UInt32(out.count - start - 4), at: start)
    }
}
