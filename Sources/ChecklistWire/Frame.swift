import ChecklistModel

/// The fixed part of a frame (Protocol/SPEC.md section 1):
/// `length` u32, `type` u8, `flags` u8, `request` u32, all big-endian.
public struct FrameHeader: Hashable, Sendable {
    /// Bytes before the body: the 4-byte length plus type, flags and request id.
    public static let size = 10
    /// The smallest legal `length`: type + flags + request id, empty body.
    public static let minimumLength: UInt32 = 6
    /// The largest body a frame of at most `maxFrameBytes` (its `length`) carries.
    public static func maxBodyBytes(maxFrameBytes: UInt32) -> Int {
        Int(maxFrameBytes) - Int(minimumLength)
    }
    /// The request id of server-initiated frames.
    public static let pushRequestID: UInt32 = 0
    /// Where the request id lies in a frame: after length, type and flags.
    public static let requestIDOffset = 6

    /// Overwrites the request id of the frame that starts at `start` in
    /// `frame` (for a frame encoded before its id was chosen).
    public static func setRequestID(_ id: UInt32, ofFrameAt start: Int = 0, in frame: inout WireWriter) {
        frame.writeU32BE(id, at: start + requestIDOffset)
    }

    /// Writes the `size` header bytes of a frame: `length` (type, flags
    /// and request id included, so 6 + the body's bytes), type, flags and
    /// request id. The one writer of the header layout.
    @inlinable
    public static func write(length: UInt32, type: MessageType, flags: FrameFlags = [], requestID: UInt32,
                             into c: inout WireCursor) {
        c.writeU32BE(length)
        c.writeU8(type.rawValue)
        c.writeU8(flags.rawValue)
        c.writeU32BE(requestID)
    }

    public var type: MessageType
    public var flags: FrameFlags
    public var requestID: UInt32

    public init(type: MessageType, flags: FrameFlags = [], requestID: UInt32) {
        self.type = type
        self.flags = flags
        self.requestID = requestID
    }
}

/// The `flags` byte of a frame.
public struct FrameFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The body is a zlib stream (RFC 1950).
    public static let compressed = FrameFlags(rawValue: 0x01)
    /// Every flag v1 defines; other bits are `BAD_FIELD flags`.
    public static let known: FrameFlags = [.compressed]
}

/// Feature bits exchanged in HELLO / HELLO_OK.
public struct Features: OptionSet, Hashable, Sendable {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The peer accepts compressed bodies.
    public static let compression = Features(rawValue: 1 << 0)
    /// The peer reads items' client keys (Protocol/SPEC.md section 6.1):
    /// a server includes them in the PAGE rows it sends only to a client
    /// that announced this bit.
    public static let clientKeys = Features(rawValue: 1 << 1)
}
