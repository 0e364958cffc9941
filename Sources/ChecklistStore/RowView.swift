import ChecklistModel

/// One row as stored, lent to a visitor without copying its text.
///
/// A `RowView` is only valid inside the closure it is handed to: its text
/// bytes point into the leaf being visited (the store's own, or a share of
/// it in `PageRows`), which is only stable during the call. Do not keep it
/// (or the buffer) past the callback.
/// Reading `id`, the flags, `due`, `price` and the text bytes allocates
/// nothing; `text`, `fields` and `item` build Strings.
public struct RowView {
    public let id: ItemID
    @usableFromInline let flags: UInt8
    public let due: Int64?
    public let price: Int64?
    @usableFromInline let textBytes: UnsafeRawBufferPointer
    /// The item's client key. The store keeps keys apart from rows (only
    /// lists with keys pay for them); the readers that hand rows out of a
    /// list (`PageRows`, `StoreCut`) fill it in from the list's keys.
    public internal(set) var clientKey: String? {
        get { storedKey }
        set { storedKey = newValue }
    }
    @usableFromInline var storedKey: String?

    @inlinable init(id: ItemID, flags: UInt8, due: Int64?, price: Int64?, textBytes: UnsafeRawBufferPointer) {
        self.id = id
        self.flags = flags
        self.due = due
        self.price = price
        self.textBytes = textBytes
        self.storedKey = nil
    }

    /// This row with the key `keys` gives it.
    @inline(__always) func keyed(by keys: ClientKeyIndex) -> RowView {
        guard !keys.isEmpty else { return self }
        var row = self
        row.clientKey = keys.key(of: id)
        return row
    }

    /// The check mark.
    @inlinable public var checked: Bool { flags & ItemFlags.checked.rawValue != 0 }
    /// The flag bits, as stored and as on the wire.
    @inlinable public var itemFlags: ItemFlags { ItemFlags(rawValue: flags) }
    /// Whether the app should remind at `due`.
    @inlinable public var remind: Bool { flags & ItemFlags.remind.rawValue != 0 }
    /// Length of the text in UTF-8 bytes.
    @inlinable public var textByteCount: Int { textBytes.count }

    /// Calls `body` with the text's UTF-8 bytes, straight from the store.
    @inlinable
    public func withTextBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(textBytes)
    }

    /// The text, decoded into a new String.
    public var text: String { String(decoding: textBytes, as: UTF8.self) }

    /// All fields, copied out.
    public var fields: ItemFields {
        ItemFields(text: text, checked: checked, due: due, remind: remind, price: price, clientKey: clientKey)
    }

    /// The whole item, copied out.
    public var item: Item { Item(id: id, fields: fields) }
}
