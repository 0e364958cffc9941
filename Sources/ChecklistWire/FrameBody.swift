import ChecklistModel

/// Turns a frame's body into the bytes its message decodes from: checks the
/// flags and inflates a compressed body, bounded by the frame limit.
public enum FrameBody {
    /// Calls `decode` with the message bytes of a frame's `body`.
    public static func withMessageBytes<T>(header: FrameHeader, body: UnsafeRawBufferPointer, maxFrameBytes: UInt32,
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
