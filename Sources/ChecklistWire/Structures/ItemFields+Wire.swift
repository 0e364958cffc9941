import ChecklistModel

extension ItemFields {
    /// Decodes **ItemFields**: flags, text, optional due, price and client
    /// key, read by `ItemFieldBytes.read` (the one reading of the layout).
    /// The key's length is checked where it is used (the store), like a
    /// text's.
    public static func decode(from r: inout WireReader) throws(ChecklistError) -> ItemFields {
        try ItemFieldBytes.read(from: &r).decoded()
    }

    public func encode(into w: inout WireWriter) {
        ItemFields.encode(checked: checked, remind: remind, due: due, price: price, clientKey: clientKey, into: &w) { w in
            w.writeString(text)
        }
    }

    /// Bytes of these fields' encoding (`write(into:)`, `encode(into:)`).
    @inlinable public var encodedBytes: Int {
        Self.encodedBytes(due: due, price: price, clientKey: clientKey, textBytes: text.utf8.count)
    }

    /// Writes these fields into reserved memory (`encodedBytes` of them):
    /// the bytes of `encode(into:)`.
    @inlinable @inline(__always) public func write(into c: inout WireCursor) {
        // The closure takes the fields one by one, not these fields whole:
        // capturing them would copy them (their strings retained and released).
        let (checked, remind, due, price, clientKey) = (checked, remind, due, price, clientKey)
        text.withWireUTF8 { text in
            Self.write(checked: checked, remind: remind, due: due, price: price, clientKey: clientKey, text: text, into: &c)
        }
    }

    /// Encodes **ItemFields** with the text written by `text` (which must
    /// write a `string`), so a server can copy text bytes straight from its
    /// storage. With a `clientKey`, flag bit 4 is set and the key follows
    /// the price.
    @inlinable
    public static func encode(checked: Bool, remind: Bool, due: Int64?, price: Int64?, clientKey: String? = nil,
                              into w: inout WireWriter, text: (inout WireWriter) -> Void) {
        var flags = ItemFlags(checked: checked, remind: remind, due: due, price: price)
        if clientKey != nil { flags.insert(.hasKey) }
        w.writeU8(flags.rawValue)
        text(&w)
        if let due { w.writeZigZag(due) }
        if let price { w.writeZigZag(price) }
        if let clientKey { w.writeString(clientKey) }
    }

    /// Bytes of **ItemFields** with a text of `textBytes` bytes: what
    /// `write(checked:remind:due:price:clientKey:text:into:)` writes.
    @inlinable
    public static func encodedBytes(due: Int64?, price: Int64?, clientKey: String? = nil, textBytes: Int) -> Int {
        1 + WireSize.bytes(textBytes) + (due.map(WireSize.zigZag) ?? 0) + (price.map(WireSize.zigZag) ?? 0)
            + (clientKey.map { WireSize.bytes($0.utf8.count) } ?? 0)
    }

    /// Writes **ItemFields** into reserved memory: the same bytes as
    /// `encode(checked:remind:due:price:into:text:)` with `writeBytes(text)`.
    /// (A new field goes into both, and into `encodedBytes`.)
    @inlinable
    public static func write(checked: Bool, remind: Bool, due: Int64?, price: Int64?, clientKey: String? = nil,
                             text: UnsafeRawBufferPointer, into c: inout WireCursor) {
        var flags = ItemFlags(checked: checked, remind: remind, due: due, price: price)
        if clientKey != nil { flags.insert(.hasKey) }
        if let clientKey {
            clientKey.withWireUTF8 { key in
                write(flags: flags.rawValue, text: text, into: &c, due: { due ?? 0 }, price: { price ?? 0 }, clientKey: key)
            }
        } else {
            write(flags: flags.rawValue, text: text, into: &c, due: { due ?? 0 }, price: { price ?? 0 }, clientKey: nil)
        }
    }

    /// The one writer of the **ItemFields** layout into reserved memory, for
    /// a flag byte already made (a server's row columns keep it so): the
    /// flags, the text (`bytes`), then the due date and price where their
    /// flag bit is set (asked for only then: a column without values may
    /// be empty), then the client key where bit 4 is set.
    @inlinable @inline(__always)
    public static func write(flags: UInt8, text: UnsafeRawBufferPointer, into c: inout WireCursor,
                             due: () -> Int64, price: () -> Int64, clientKey: UnsafeRawBufferPointer?) {
        c.writeU8(flags)
        c.writeBytes(text)
        if flags & ItemFlags.hasDue.rawValue != 0 { c.writeZigZag(due()) }
        if flags & ItemFlags.hasPrice.rawValue != 0 { c.writeZigZag(price()) }
        if flags & ItemFlags.hasKey.rawValue != 0, let clientKey { c.writeBytes(clientKey) }
    }
}
