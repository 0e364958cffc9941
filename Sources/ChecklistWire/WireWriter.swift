import ChecklistModel

/// Appends the body encodings of Protocol/SPEC.md section 3, and whole frames,
/// to a growable byte array. Keep one writer per connection and `reset()` it to
/// reuse its storage.
public struct WireWriter: Sendable {
    public var bytes: [UInt8]

    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    @inlinable public mutating func reset() { bytes.removeAll(keepingCapacity: true) }

    @inlinable public var count: Int { bytes.count }

    @inlinable public mutating func writeU8(_ v: UInt8) { bytes.append(v) }

    @inlinable public mutating func writeBool(_ v: Bool) { bytes.append(v ? 1 : 0) }

    @inlinable @inline(__always)
    public mutating func writeVarint(_ v: UInt64) {
        // One byte (values below 128: most counts, flags and lengths) inline.
        if v < 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v))
        } else {
            writeLongVarint(v)
        }
    }

    /// `writeVarint` of a value of two bytes or more.
    @usableFromInline @inline(never)
    mutating func writeLongVarint(_ v: UInt64) {
        var v = v
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    @inlinable public mutating func writeVarint(_ v: Int) { writeVarint(UInt64(v)) }

    @inlinable public mutating func writeZigZag(_ v: Int64) {
        writeVarint(UInt64(bitPattern: (v << 1) ^ (v >> 63)))
    }

    public mutating func writeBytes(_ v: UnsafeRawBufferPointer) {
        writeVarint(UInt64(v.count))
        bytes.append(contentsOf: v)
    }

    public mutating func writeBytes(_ v: [UInt8]) {
        writeVarint(UInt64(v.count))
        bytes.append(contentsOf: v)
    }

    public mutating func writeString(_ v: String) {
        v.withWireUTF8 { utf8 in
            writeVarint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    /// Appends a big-endian u32.
    public mutating func writeU32BE(_ v: UInt32) {
        bytes.append(contentsOf: repeatElement(0, count: 4))
        writeU32BE(v, at: bytes.count - 4)
    }

    /// Overwrites 4 bytes at `offset` with a big-endian u32.
    public mutating func writeU32BE(_ v: UInt32, at offset: Int) {
        bytes[offset] = UInt8(truncatingIfNeeded: v >> 24)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: v >> 16)
        bytes[offset + 2] = UInt8(truncatingIfNeeded: v >> 8)
        bytes[offset + 3] = UInt8(truncatingIfNeeded: v)
    }
}
