/// Writes the body encodings of Protocol/SPEC.md section 3 straight into
/// memory reserved beforehand (`WireWriter.writeReserved`): no capacity or
/// uniqueness check per field, one bounds check per write in debug builds.
///
/// Pair it with `WireSize`, which says how many bytes each write takes, to
/// reserve exactly what a message needs.
public struct WireCursor {
    @usableFromInline var next: UnsafeMutableRawPointer
    @usableFromInline let end: UnsafeMutableRawPointer

    @inlinable init(_ buffer: UnsafeMutableRawBufferPointer) {
        next = buffer.baseAddress!
        end = next + buffer.count
    }

    /// Bytes not written yet.
    @inlinable public var remaining: Int { end - next }

    @inlinable public mutating func writeU8(_ v: UInt8) {
        assert(next < end, "WireCursor: wrote past the reserved bytes")
        next.storeBytes(of: v, as: UInt8.self)
        next += 1
    }

    @inlinable public mutating func writeVarint(_ v: UInt64) {
        assert(remaining >= WireSize.varint(v), "WireCursor: wrote past the reserved bytes")
        var v = v
        while v >= 0x80 {
            next.storeBytes(of: UInt8(truncatingIfNeeded: v) | 0x80, as: UInt8.self)
            next += 1
            v >>= 7
        }
        next.storeBytes(of: UInt8(v), as: UInt8.self)
        next += 1
    }

    @inlinable public mutating func writeZigZag(_ v: Int64) {
        writeVarint(UInt64(bitPattern: (v << 1) ^ (v >> 63)))
    }

    /// A `bytes` field: length varint, then the bytes.
    @inlinable public mutating func writeBytes(_ v: UnsafeRawBufferPointer) {
        writeVarint(UInt64(v.count))
        precondition(remaining >= v.count, "WireCursor: wrote past the reserved bytes")
        if let base = v.baseAddress { next.copyMemory(from: base, byteCount: v.count) }
        next += v.count
    }
}

/// Sizes of the body encodings, for reserving a message's bytes at once.
public enum WireSize {
    /// Bytes of `v` as a varint: 1 ... 10.
    @inlinable public static func varint(_ v: UInt64) -> Int {
        // 7 bits per byte; 0 still takes one byte.
        (64 - (v | 1).leadingZeroBitCount + 6) / 7
    }

    /// Bytes of `v` as a zigzag varint.
    @inlinable public static func zigZag(_ v: Int64) -> Int {
        varint(UInt64(bitPattern: (v << 1) ^ (v >> 63)))
    }

    /// Bytes of a `bytes`/`string` field of `count` bytes.
    @inlinable public static func bytes(_ count: Int) -> Int {
        varint(UInt64(count)) + count
    }
}

extension WireWriter {
    /// Appends exactly `count` bytes, all written by `body` through a
    /// cursor over the reserved memory (the array grows once). `body` must
    /// write exactly `count` bytes.
    @inlinable
    public mutating func writeReserved(count: Int, _ body: (inout WireCursor) -> Void) {
        let start = bytes.count
        grow(by: count)
        bytes.withUnsafeMutableBytes { raw in
            var cursor = WireCursor(UnsafeMutableRawBufferPointer(rebasing: raw[start...]))
            body(&cursor)
            precondition(cursor.remaining == 0, "WireWriter.writeReserved: \(cursor.remaining) of \(count) bytes left unwritten")
        }
    }
}

extension WireWriter {
    /// Appends what `body` writes through a cursor over `bound` reserved
    /// bytes, then gives back the bytes it left unwritten: one pass for a
    /// message whose exact size is only known once it is written (a PAGE),
    /// when a bound is cheap. `body` must not write more than `bound` bytes.
    @inlinable
    public mutating func writeReserved(atMost bound: Int, _ body: (inout WireCursor) -> Void) {
        let start = bytes.count
        grow(by: bound)
        let unwritten = bytes.withUnsafeMutableBytes { raw in
            var cursor = WireCursor(UnsafeMutableRawBufferPointer(rebasing: raw[start...]))
            body(&cursor)
            return cursor.remaining
        }
        bytes.removeLast(unwritten)
    }

    /// Grows the array by `count` zeros, copied a chunk at a time (a
    /// memcpy: appending `repeatElement(0, ...)` goes element by element).
    @inlinable
    mutating func grow(by count: Int) {
        bytes.reserveCapacity(bytes.count + count)
        var left = count
        while left > 0 {
            let n = min(left, wireZeros.count)
            bytes.append(contentsOf: wireZeros[..<n])
            left -= n
        }
    }
}

/// Zeros to grow a `WireWriter` by in `writeReserved`.
@usableFromInline let wireZeros = [UInt8](repeating: 0, count: 16 << 10)
