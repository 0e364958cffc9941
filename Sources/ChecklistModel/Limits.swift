/// The limits a server enforces and announces in HELLO_OK.
public struct Limits: Hashable, Sendable {
    /// Largest frame `length` (type, flags, request id and body; after
    /// decompression) a peer may send.
    public var maxFrameBytes: UInt32
    /// Largest `limit` a GET_PAGE may ask for.
    public var maxPageRows: UInt32
    /// Longest item text or list name/icon, in UTF-8 bytes.
    public var maxTextBytes: UInt32
    /// Most operations in one PATCH.
    public var maxBatchOps: UInt32

    public init(maxFrameBytes: UInt32 = 4 << 20, maxPageRows: UInt32 = 1000, maxTextBytes: UInt32 = 4096, maxBatchOps: UInt32 = 1000) {
        self.maxFrameBytes = maxFrameBytes
        self.maxPageRows = maxPageRows
        self.maxTextBytes = maxTextBytes
        self.maxBatchOps = maxBatchOps
    }

    public static let `default` = Limits()
}
