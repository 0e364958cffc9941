import ChecklistModel

/// One row of a PAGE as it lies in the body (Protocol/SPEC.md section 6.7):
/// the item's id, then its **ItemFields** (`ItemFieldBytes`), with the
/// client key after the price when flag bit 4 is set (a client that
/// announced CLIENT_KEYS gets keys).
///
/// `read(from:)` is the one reading of the row layout: `PageMessage.decode`,
/// the client's `PageBytes` and its paging cursor all read rows through it.
/// Text and key bytes are borrowed from the body: valid only as long as it is.
public struct PageRow {
    public let id: ItemID
    /// The row's fields, text and key still as bytes.
    public let fields: ItemFieldBytes

    @inlinable init(id: ItemID, fields: ItemFieldBytes) {
        self.id = id
        self.fields = fields
    }

    /// Reads one row: the id varint, then ItemFields.
    @inlinable
    public static func read(from r: inout WireReader) throws(ChecklistError) -> PageRow {
        let id = ItemID(try r.readVarint("id"))
        return PageRow(id: id, fields: try ItemFieldBytes.read(from: &r))
    }

    /// The flag bits as on the wire.
    @inlinable public var flags: ItemFlags { fields.flags }
    /// The text's UTF-8 bytes, borrowed from the body.
    @inlinable public var textBytes: UnsafeRawBufferPointer { fields.textBytes }
    @inlinable public var due: Int64? { fields.due }
    @inlinable public var price: Int64? { fields.price }
    /// The client key's bytes, or nil for a row without a key.
    @inlinable public var clientKeyBytes: UnsafeRawBufferPointer? { fields.clientKeyBytes }
    /// The check mark.
    @inlinable public var checked: Bool { fields.checked }
    /// The text, decoded into a new String (this allocates; invalid UTF-8 is repaired).
    public var text: String { String(decoding: textBytes, as: UTF8.self) }
    /// The client key, decoded into a new String (this allocates).
    public var clientKey: String? { clientKeyBytes.map { String(decoding: $0, as: UTF8.self) } }

    /// The row as an `Item`; text and key must be UTF-8.
    public func item() throws(ChecklistError) -> Item {
        Item(id: id, fields: try fields.decoded())
    }
}
