/// The flag bits of an item: the `flags` byte of **ItemFields** on the wire
/// (Protocol/SPEC.md section 6) and the byte the store keeps per row.
///
/// The constants are inlinable computed properties, so that the store's
/// row scans test bits with no call across modules.
public struct ItemFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The check mark.
    @inlinable public static var checked: ItemFlags { ItemFlags(rawValue: 1 << 0) }
    /// Remind at `due`.
    @inlinable public static var remind: ItemFlags { ItemFlags(rawValue: 1 << 1) }
    /// A due date follows.
    @inlinable public static var hasDue: ItemFlags { ItemFlags(rawValue: 1 << 2) }
    /// A price follows.
    @inlinable public static var hasPrice: ItemFlags { ItemFlags(rawValue: 1 << 3) }
    /// A client key follows (Protocol/SPEC.md section 6, **ItemFields**).
    /// The store keeps keys apart from its rows: a row's stored flags never
    /// have this bit.
    @inlinable public static var hasKey: ItemFlags { ItemFlags(rawValue: 1 << 4) }
    /// Every bit with a meaning; others are refused.
    @inlinable public static var known: ItemFlags { [.checked, .remind, .hasDue, .hasPrice, .hasKey] }

    /// The flags of an item with these fields.
    @inlinable
    public init(checked: Bool, remind: Bool, due: Int64?, price: Int64?) {
        var f: ItemFlags = []
        if checked { f.insert(.checked) }
        if remind { f.insert(.remind) }
        if due != nil { f.insert(.hasDue) }
        if price != nil { f.insert(.hasPrice) }
        self = f
    }
}
