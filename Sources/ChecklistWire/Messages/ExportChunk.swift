import ChecklistModel

/// EXPORT_CHUNK (0xC0): the answer to EXPORT, one piece of the snapshot
/// file. Concatenated in `sequence` order, the `data` of every chunk up to
/// the one with status END is the whole snapshot (a gzip file).
public struct ExportChunk: WireMessage {
    public static let messageType = MessageType.exportChunk

    public enum Status: UInt8, Hashable, Sendable {
        /// More chunks follow: ask for the next with EXPORT NEXT.
        case more = 0
        /// The last chunk: the snapshot is complete.
        case end = 1
        /// The answer to CANCEL: the export is over, no data.
        case cancelled = 2
    }

    /// 0 for the answer to START, then 1, 2, ...
    public var sequence: UInt64
    public var status: Status
    /// Lists in the export.
    public var listCount: UInt64
    /// Items in the export.
    public var itemCount: UInt64
    /// Items in the chunks sent so far, this one included.
    public var itemsWritten: UInt64
    /// Uncompressed snapshot bytes produced so far (the chunks so far
    /// inflate to at most this many).
    public var rawBytes: UInt64
    /// The next bytes of the snapshot file.
    public var data: [UInt8]

    public init(sequence: UInt64, status: Status, listCount: UInt64, itemCount: UInt64, itemsWritten: UInt64,
                rawBytes: UInt64, data: [UInt8]) {
        self.sequence = sequence
        self.status = status
        self.listCount = listCount
        self.itemCount = itemCount
        self.itemsWritten = itemsWritten
        self.rawBytes = rawBytes
        self.data = data
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> ExportChunk {
        let sequence = try r.readVarint("sequence")
        let raw = try r.readU8("status")
        guard let status = Status(rawValue: raw) else { throw .badField("status", "unknown export status \(raw)") }
        return ExportChunk(sequence: sequence, status: status, listCount: try r.readVarint("listCount"),
                           itemCount: try r.readVarint("itemCount"), itemsWritten: try r.readVarint("itemsWritten"),
                           rawBytes: try r.readVarint("rawBytes"), data: try r.readBytes("data"))
    }

    public func encode(into w: inout WireWriter) {
        data.withUnsafeBytes { Self.encode(header: self, data: $0, into: &w) }
    }

    /// The most `data` bytes a chunk in a frame of at most `maxFrameBytes`
    /// carries, 64 bytes being kept for the other fields.
    public static func maxDataBytes(maxFrameBytes: UInt32) -> Int {
        Int(maxFrameBytes) - 64
    }

    /// Encodes a chunk whose data is borrowed (the server's output path).
    public static func encode(header c: ExportChunk, data: UnsafeRawBufferPointer, into w: inout WireWriter) {
        w.writeVarint(c.sequence)
        w.writeU8(c.status.rawValue)
        w.writeVarint(c.listCount)
        w.writeVarint(c.itemCount)
        w.writeVarint(c.itemsWritten)
        w.writeVarint(c.rawBytes)
        w.writeBytes(data)
    }
}
