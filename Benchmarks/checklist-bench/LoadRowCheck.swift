/// The fast check of a PAGE's rows of the load list: one pass over the
/// body's bytes, no allocation, no call per field, no store: each row's
/// text is read in place (its digits parsed, its dots padding compared 8
/// bytes at a time) against the text it must have (`LoadPlan.itemText`).
///
/// It only ever says "all right" or "not sure": on false, the caller
/// decodes the rows again field by field (`LoadConnection.checkPage`'s
/// slow loop), which says what is wrong, or throws for a body that does not
/// decode. So the answer checked is the same as before; only the common
/// case (every row right) got cheap.
enum LoadRowCheck {
    /// Whether the first `count` rows in `rows` (a PAGE body after its
    /// header) are exactly rows `first ..< first + count` of the load list:
    /// ids `first + 1 ...` in order, no flag bits above the four defined,
    /// and the texts `item <index>` padded with dots to `textBytes`
    /// (`LoadConnection.isItemText`). False when any row differs, is cut off
    /// or uses a varint of 10 bytes (left to the slow decode).
    static func rowsAreRight(_ rows: UnsafeRawBufferPointer, first: Int, count: Int, textBytes: Int) -> Bool {
        guard count > 0 else { return true }
        guard first >= 0, let base = rows.baseAddress else { return false }
        var reader = RawRowReader(next: base, end: base + rows.count)
        for index in first ..< first + count {
            guard let id = reader.varint(), id == UInt64(index + 1),
                  let flags = reader.byte(), flags & 0xF0 == 0,
                  let length = reader.varint(), let text = reader.take(Int(clamping: length)),
                  isItemText(text, count: Int(length), index: index, textBytes: textBytes) else { return false }
            if flags & 4 != 0 { guard reader.varint() != nil else { return false } }  // due
            if flags & 8 != 0 { guard reader.varint() != nil else { return false } }  // price
        }
        return true
    }

    /// "item" as a little-endian load.
    private static let item: UInt32 = 0x6D_65_74_69
    /// Eight dots.
    private static let dots: UInt64 = 0x2E2E_2E2E_2E2E_2E2E

    /// `LoadConnection.isItemText` over raw memory: "item ", the decimal
    /// `index` (no leading zero), then dots up to `textBytes` bytes.
    @inline(__always)
    private static func isItemText(_ text: UnsafeRawPointer, count: Int, index: Int, textBytes: Int) -> Bool {
        guard count > 5 else { return false }
        guard UInt32(littleEndian: text.loadUnaligned(as: UInt32.self)) == item,
              text.load(fromByteOffset: 4, as: UInt8.self) == 32 else { return false }  // "item "
        var value = 0
        var end = 5
        while end < count && end < 25 {
            let digit = Int(text.load(fromByteOffset: end, as: UInt8.self)) &- 48
            guard digit >= 0 && digit <= 9 else { break }
            value = value &* 10 &+ digit
            end &+= 1
        }
        guard end > 5, value == index, end == 6 || text.load(fromByteOffset: 5, as: UInt8.self) != 48,
              count == max(end, textBytes) else { return false }
        guard count &- end >= 8 else {
            for i in end ..< count where text.load(fromByteOffset: i, as: UInt8.self) != 46 { return false }
            return true
        }
        // Whole words, the last one ending at the end (overlapping the one before).
        var i = end
        while i &+ 8 < count {
            guard text.loadUnaligned(fromByteOffset: i, as: UInt64.self) == dots else { return false }
            i &+= 8
        }
        return text.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self) == dots
    }
}

/// Reads the fields of PAGE rows from raw memory for `LoadRowCheck`: nil
/// past the end, and for a varint of 10 bytes (the slow decode judges it).
private struct RawRowReader {
    var next: UnsafeRawPointer
    let end: UnsafeRawPointer

    @inline(__always)
    mutating func byte() -> UInt8? {
        guard next < end else { return nil }
        defer { next += 1 }
        return next.load(as: UInt8.self)
    }

    @inline(__always)
    mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while shift < 63 {
            guard next < end else { return nil }
            let b = next.load(as: UInt8.self)
            next += 1
            value |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }

    /// The next `count` bytes' start, or nil when fewer are left.
    @inline(__always)
    mutating func take(_ count: Int) -> UnsafeRawPointer? {
        guard count <= end - next else { return nil }
        defer { next += count }
        return next
    }
}
