/// The fast check of a PAGE's rows of the load list: one pass over the
/// body's bytes, no allocation, no call per field, each row's text compared
/// 8 bytes at a time against the text it must have (`LoadPlan.itemText`).
///
/// It only ever says "all right" or "not sure": on false, the caller
/// decodes the rows again field by field (`LoadConnection.checkPage`'s
/// slow loop), which says what is wrong, or throws for a body that does not
/// decode. So the answer checked is the same as before; only the common
/// case (every row right) got cheap.
enum LoadRowCheck {
    /// "item " in UTF-8.
    private static let prefix: (UInt8, UInt8, UInt8, UInt8, UInt8) = (105, 116, 101, 109, 32)
    /// The longest decimal index (Int.max has 19 digits).
    private static let maxDigits = 20

    /// Whether the first `count` rows in `rows` (a PAGE body after its
    /// header) are exactly rows `first ..< first + count` of the load list:
    /// ids `first + 1 ...` in order, no flag bits above the four defined,
    /// and the texts `item <index>` padded with dots to `textBytes`
    /// (`LoadConnection.isItemText`). False when any row differs, is cut off
    /// or uses a varint of 10 bytes (left to the slow decode).
    static func rowsAreRight(_ rows: UnsafeRawBufferPointer, first: Int, count: Int, textBytes: Int) -> Bool {
        guard count > 0 else { return true }
        guard first >= 0, let base = rows.baseAddress else { return false }
        let width = max(textBytes, 5 + maxDigits)
        return withUnsafeTemporaryAllocation(byteCount: width, alignment: 1) { scratch in
            // The expected text, digits left out: "item " then dots.
            let expected = scratch.baseAddress!
            scratch.initializeMemory(as: UInt8.self, repeating: 46)  // "."
            expected.storeBytes(of: prefix, as: (UInt8, UInt8, UInt8, UInt8, UInt8).self)
            var reader = RawRowReader(next: base, end: base + rows.count)
            for index in first ..< first + count {
                guard let id = reader.varint(), id == UInt64(index + 1),
                      let flags = reader.byte(), flags & 0xF0 == 0,
                      let length = reader.varint(), let text = reader.take(Int(clamping: length)) else { return false }
                let digits = writeDigits(of: index, at: expected + 5)
                let want = max(5 + digits, textBytes)
                let same = Int(length) == want && equal(text, expected, count: want)
                (expected + 5).initializeMemory(as: UInt8.self, repeating: 46, count: digits)
                guard same else { return false }
                if flags & 4 != 0 { guard reader.varint() != nil else { return false } }  // due
                if flags & 8 != 0 { guard reader.varint() != nil else { return false } }  // price
            }
            return true
        }
    }

    /// Whether the `count` bytes at `a` and `b` are the same, 8 at a time
    /// (a text is some tens of bytes: a call to `memcmp` costs more).
    @inline(__always)
    private static func equal(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int) -> Bool {
        var i = 0
        while i + 8 <= count {
            guard a.loadUnaligned(fromByteOffset: i, as: UInt64.self) == b.loadUnaligned(fromByteOffset: i, as: UInt64.self) else {
                return false
            }
            i += 8
        }
        while i < count {
            guard a.load(fromByteOffset: i, as: UInt8.self) == b.load(fromByteOffset: i, as: UInt8.self) else { return false }
            i += 1
        }
        return true
    }

    /// Writes `value`'s decimal digits at `out`; returns how many.
    @inline(__always)
    private static func writeDigits(of value: Int, at out: UnsafeMutableRawPointer) -> Int {
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        var v = value
        for i in stride(from: digits - 1, through: 0, by: -1) {
            out.storeBytes(of: UInt8(truncatingIfNeeded: 48 + v % 10), toByteOffset: i, as: UInt8.self)
            v /= 10
        }
        return digits
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
