import ChecklistModel

/// Reads the rows of a PAGE body in place, for `PageBytes`: the same
/// decoding as `WireReader` (Protocol/SPEC.md section 3: varints, the flags
/// byte, length-prefixed text, zigzag due and price), written out with raw
/// loads and one bounds test per byte, and nil instead of an error where the
/// bytes do not decode (the caller reports that once, for the whole page).
struct PageRowScanner {
    private let bytes: UnsafeRawBufferPointer
    private(set) var index: Int

    init(_ bytes: UnsafeRawBufferPointer, from index: Int = 0) {
        self.bytes = bytes
        self.index = index
    }

    /// The next row, or nil when the bytes left do not hold one.
    @inline(__always)
    mutating func row() -> PageBytes.Row? {
        guard let id = varint(), index < bytes.count else { return nil }
        let flags = ItemFlags(rawValue: bytes[index])
        index &+= 1
        guard flags.isSubset(of: .known), let length = varint(), length <= UInt64(bytes.count &- index) else { return nil }
        let text = UnsafeRawBufferPointer(rebasing: bytes[index..<(index &+ Int(length))])
        index &+= Int(length)
        var due: Int64?
        var price: Int64?
        if flags.contains(.hasDue) {
            guard let u = varint() else { return nil }
            due = Self.unzigzag(u)
        }
        if flags.contains(.hasPrice) {
            guard let u = varint() else { return nil }
            price = Self.unzigzag(u)
        }
        return PageBytes.Row(id: ItemID(id), flags: flags, textBytes: text, due: due, price: price)
    }

    /// A varint of at most 10 bytes that fits in 64 bits.
    @inline(__always)
    private mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        for position in 0..<10 {
            guard index < bytes.count else { return nil }
            let b = bytes[index]
            index &+= 1
            if position == 9 && b > 1 { return nil }
            value |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return value }
            shift &+= 7
        }
        return nil
    }

    @inline(__always)
    private static func unzigzag(_ u: UInt64) -> Int64 {
        Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
    }
}
