import ChecklistModel

/// Turns a frame's body into the bytes its message decodes from: checks the
/// flags and inflates a compressed body, bounded by the frame limit.
public enum FrameBody {
    /// Calls `decode` with the message bytes of a frame's `body`.
    /// Inlinable for the usual frame (no flags: the body is the message),
    /// so that a caller's `T` is not returned and destroyed through its
    /// type's metadata (a PATCH's decoded parts, once a request).
    @inlinable
    public static func withMessageBytes<T>(header: FrameHeader, body: UnsafeRawBufferPointer, maxFrameBytes: UInt32,
                                           _ decode: (inout WireReader) throws(ChecklistError) -> T) throws(ChecklistError) -> T {
        guard header.flags.rawValue == 0 else {
            return try withFlaggedMessageBytes(header: header, body: body, maxFrameBytes: maxFrameBytes, decode)
        }
        var reader = WireReader(body, from: 0)
        return try decode(&reader)
    }

    /// `withMessageBytes` of a frame with flags: checked, and inflated when compressed.
    @usableFromInline
    static func withFlaggedMessageBytes<T>(header: FrameHeader, body: UnsafeRawBufferPointer, maxFrameBytes: UInt32,
                                           _ decode: (inout WireReader) throws(ChecklistError) -> T) throws(ChecklistError) -> T {
        guard header.flags.isSubset(of: .known) else {
            throw .badField("flags", "unknown frame flag bits 0x\(String(header.flags.rawValue & ~FrameFlags.known.rawValue, radix: 16))")
        }
        if header.flags.contains(.compressed) {
            // HELLO and HELLO_OK travel before either peer announced COMPRESSION.
            guard header.type != .hello && header.type != .helloOK else {
                throw .badField("flags", "\(header.type) is never compressed")
            }
            // Decoded straight from the inflater's buffer: no array per frame.
            return try Zlib.withDecompressed(body, limit: Int(maxFrameBytes) - Int(FrameHeader.minimumLength)) {
                (raw) throws(ChecklistError) -> T in
                var reader = WireReader(raw)
                return try decode(&reader)
            }
        }
        var reader = WireReader(body)
        return try decode(&reader)
    }
}
