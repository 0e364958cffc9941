import ChecklistModel

/// **ItemFields** (Protocol/SPEC.md section 3) as they lie in a body: the
/// flags, the text and the client key borrowed from the bytes, due and
/// price decoded. `read(from:)` is the one reading of the layout: every
/// decoder of ItemFields (`ItemFields.decode`, PATCH's INSERT, PAGE rows
/// through `PageRow`) goes through it, the client's in-place page paths
/// included.
///
/// The borrowed bytes are valid only as long as the reader's buffer is.
/// Neither the text nor the key is checked to be UTF-8 here: `decoded()`
/// checks both when it makes Strings.
public struct ItemFieldBytes {
    /// The flag bits as on the wire (`checked`, `remind`, `hasDue`, `hasPrice`, `hasKey`).
    public let flags: ItemFlags
    /// The text's bytes (UTF-8 when the sender follows the protocol).
    public let textBytes: UnsafeRawBufferPointer
    public let due: Int64?
    public let price: Int64?
    /// The client key's bytes, when flag bit 4 (`hasKey`) is set.
    public let clientKeyBytes: UnsafeRawBufferPointer?

    @inlinable
    init(flags: ItemFlags, textBytes: UnsafeRawBufferPointer, due: Int64?, price: Int64?, clientKeyBytes: UnsafeRawBufferPointer?) {
        self.flags = flags
        self.textBytes = textBytes
        self.due = due
        self.price = price
        self.clientKeyBytes = clientKeyBytes
    }

    /// Reads flags, text, then due, price and client key as the flags say.
    /// Unknown flag bits are `BAD_FIELD` (field `flags`).
    @inlinable
    public static func read(from r: inout WireReader) throws(ChecklistError) -> ItemFieldBytes {
        let raw = try r.readU8("flags")
        let flags = ItemFlags(rawValue: raw)
        guard flags.isSubset(of: .known) else { throw unknownFlags(raw) }
        let text = try r.readByteSlice("text")
        let due = flags.contains(.hasDue) ? try r.readZigZag("due") : nil
        let price = flags.contains(.hasPrice) ? try r.readZigZag("price") : nil
        let key = flags.contains(.hasKey) ? try r.readByteSlice("clientKey") : nil
        return ItemFieldBytes(flags: flags, textBytes: text, due: due, price: price, clientKeyBytes: key)
    }

    @usableFromInline
    static func unknownFlags(_ raw: UInt8) -> ChecklistError {
        .badField("flags", "unknown item flag bits 0x\(String(raw & ~ItemFlags.known.rawValue, radix: 16))")
    }

    /// The check mark.
    @inlinable public var checked: Bool { flags.contains(.checked) }
    /// Whether a reminder is set for the due date.
    @inlinable public var remind: Bool { flags.contains(.remind) }

    /// The fields as values; text and key that are not UTF-8 are
    /// `BAD_FIELD` (fields `text`, `clientKey`).
    public func decoded() throws(ChecklistError) -> ItemFields {
        guard let text = String(wireUTF8: textBytes) else {
            throw .badField("text", "text is not valid UTF-8")
        }
        var key: String?
        if let clientKeyBytes {
            guard let k = String(wireUTF8: clientKeyBytes) else {
                throw .badField("clientKey", "clientKey is not valid UTF-8")
            }
            key = k
        }
        return ItemFields(text: text, checked: checked, due: due, remind: remind, price: price, clientKey: key)
    }
}
