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
            FrameHeader.write(length: 0, type: type, requestID: requestID, into: &c)  // the length, filled in below
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

    /// Appends one frame whose body of exactly `bodyBytes` bytes `body`
    /// writes through a cursor: header and body reserved at once, the
    /// header written whole. A body that compression applies to goes the
    /// way of `append(type:requestID:to:body:)`, with the same result.
    @inlinable
    public mutating func append(type: MessageType, requestID: UInt32, bodyBytes: Int, to out: inout WireWriter,
                                body: (inout WireCursor) -> Void) {
        if compress && bodyBytes >= Self.compressionThreshold {
            append(type: type, requestID: requestID, to: &out) { w in w.writeReserved(count: bodyBytes, body) }
            return
        }
        let frameBytes = FrameHeader.size + bodyBytes
        out.reserveForAppending(frameBytes)  // many answers in a row
        out.writeReserved(count: frameBytes) { c in
            FrameHeader.write(length: FrameHeader.minimumLength + UInt32(bodyBytes), type: type, requestID: requestID, into: &c)
            body(&c)
        }
    }

    /// One frame that is never compressed (a CHANGE push) in an array of
    /// exactly its size, its body of exactly `bodyBytes` bytes written by
    /// `body` through a cursor.
    @inlinable
    public static func frame(type: MessageType, requestID: UInt32, bodyBytes: Int, body: (inout WireCursor) -> Void) -> [UInt8] {
        // A writer reserved to the frame, not `Array(unsafeUninitializedCapacity:)`:
        // that allocates through an unspecialized generic of the standard library.
        let frameBytes = FrameHeader.size + bodyBytes
        var w = WireWriter(capacity: frameBytes)
        w.writeReserved(count: frameBytes) { c in
            FrameHeader.write(length: FrameHeader.minimumLength + UInt32(bodyBytes), type: type, requestID: requestID, into: &c)
            body(&c)
        }
        return w.bytes
    }
}
