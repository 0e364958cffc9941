import ChecklistModel

/// Encoding a PAGE straight from where rows are stored, and how many rows
/// fit in one frame (Protocol/SPEC.md section 6.7: rows that would push the
/// frame past `maxFrameBytes` are left for the next request).
extension PageMessage {
    /// Most bytes the header takes: five varints of at most 10 bytes.
    public static let maxHeaderBytes = 5 * 10
    /// Most bytes a row takes besides its text: id varint (10), flags (1),
    /// text length varint (10), due and price zigzag varints (10 each).
    public static let maxRowBytesBesidesText = 10 + 1 + 10 + 10 + 10
    /// Most bytes a row's client key adds (for a client that announced
    /// CLIENT_KEYS): its length varint and `ClientKey.maxBytes`.
    public static let maxKeyBytes = 1 + ClientKey.maxBytes

    /// Writes one row into reserved memory (at most `maxRowBytesBesidesText`,
    /// plus `maxKeyBytes` with a client key, plus the text): its id, then
    /// **ItemFields** with the text copied from `text` (UTF-8 bytes, e.g.
    /// straight from the store's storage), without growing an array field by field.
    @inlinable
    public static func writeRow(id: ItemID, checked: Bool, remind: Bool, due: Int64?, price: Int64?, clientKey: String? = nil,
                                text: UnsafeRawBufferPointer, into c: inout WireCursor) {
        c.writeVarint(id.rawValue)
        ItemFields.write(checked: checked, remind: remind, due: due, price: price, clientKey: clientKey, text: text, into: &c)
    }

    /// Writes one row of a PAGE from a server's row columns: the id, then
    /// **ItemFields** with the flag byte as stored (`ItemFields.write(flags:...)`).
    @inlinable @inline(__always)
    public static func writeRow(id: UInt64, flags: UInt8, text: UnsafeRawBufferPointer, into c: inout WireCursor,
                                due: () -> Int64, price: () -> Int64) {
        c.writeVarint(id)
        ItemFields.write(flags: flags, text: text, into: &c, due: due, price: price, clientKey: nil)
    }

    /// Counts the rows of one PAGE that fit in a frame, by the encoding's
    /// worst case per field, so that nothing is encoded twice.
    public struct RowsFitting: Sendable {
        /// The largest body a frame may carry.
        public let maxBodyBytes: Int
        /// Bytes the header and the rows admitted so far may take.
        private var bound = PageMessage.maxHeaderBytes
        /// Rows admitted so far.
        public private(set) var count = 0

        public init(maxFrameBytes: UInt32) {
            maxBodyBytes = FrameHeader.maxBodyBytes(maxFrameBytes: maxFrameBytes)
        }

        /// Whether `rows` rows of at most `maxTextBytes` each surely fit:
        /// then none needs to be measured.
        public func allFit(rows: Int, maxTextBytes: Int) -> Bool {
            PageMessage.maxHeaderBytes + rows * (PageMessage.maxRowBytesBesidesText + maxTextBytes) <= maxBodyBytes
        }

        /// Admits the next row, of `textBytes` text bytes, if it still fits;
        /// once one does not, no later row does either.
        public mutating func admit(textBytes: Int) {
            bound += PageMessage.maxRowBytesBesidesText + textBytes
            if bound <= maxBodyBytes { count += 1 }
        }
    }
}
