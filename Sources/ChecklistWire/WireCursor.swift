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

    /// A `string` field: length varint, then the UTF-8 bytes.
    @inlinable public mutating func writeString(_ v: String) {
        v.withWireUTF8 { writeBytes($0) }
    }

    /// A big-endian u32 (fixed width: a frame header's length and request id).
    @inlinable public mutating func writeU32BE(_ v: UInt32) {
        assert(remaining >= 4, "WireCursor: wrote past the reserved bytes")
        next.storeBytes(of: v.bigEndian, as: UInt32.self)
        next += 4
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

    /// Bytes of `v` as a `string` field.
    @inlinable public static func string(_ v: String) -> Int {
        bytes(v.utf8.count)
    }
}

extension WireWriter {
    /// Appends exactly `count` bytes, all written by `body` through a
    /// cursor over the reserved memory (the array grows at most once, and
    /// the bytes are not zeroed first). `body` must write exactly `count` bytes.
    @inlinable
    public mutating func writeReserved(count: Int, _ body: (inout WireCursor) -> Void) {
        let unwritten = writeUninitialized(atMost: count, body)
        precondition(unwritten == 0, "WireWriter.writeReserved: \(unwritten) of \(count) bytes left unwritten")
    }

    /// Makes room for `count` more bytes the way appending grows an array
    /// (at least doubling), for a `writeReserved` among many in a row: a
    /// writer of several frames or operations is then not reallocated at
    /// each one, as `writeReserved`'s exact reservation alone would.
    @inlinable
    public mutating func reserveForAppending(_ count: Int) {
        if bytes.capacity - bytes.count < count { bytes.reserveCapacity(Swift.max(bytes.count + count, 2 * bytes.capacity)) }
    }

    /// Appends what `body` writes through a cursor over `bound` reserved
    /// bytes: one pass for a message whose exact size is only known once it
    /// is written (a PAGE), when a bound is cheap. The reserved memory is
    /// not zeroed, and only the bytes written become part of the array.
    /// `body` must not write more than `bound` bytes.
    @inlinable
    public mutating func writeReserved(atMost bound: Int, _ body: (inout WireCursor) -> Void) {
        _ = writeUninitialized(atMost: bound, body)
    }

    /// Lets `body` write up to `bound` bytes into the array's spare capacity
    /// (reserved to exactly what is needed when short: steady reuse of one
    /// writer never reallocates); the bytes it wrote are appended. Returns
    /// how many of the `bound` it left unwritten.
    @inlinable
    mutating func writeUninitialized(atMost bound: Int, _ body: (inout WireCursor) -> Void) -> Int {
        guard bound > 0 else {
            // Nothing reserved: a cursor with no room (and a real address).
            var none: UInt8 = 0
            return withUnsafeMutableBytes(of: &none) { one in
                var cursor = WireCursor(UnsafeMutableRawBufferPointer(rebasing: one[..<0]))
                body(&cursor)
                return 0
            }
        }
        // Exactly what is needed, as `reserveCapacity` gives: the append's
        // own geometric growth would leave up to half of a writer's array
        // unused, and many are kept (encoded changes, log records).
        if bytes.capacity - bytes.count < bound { bytes.reserveCapacity(bytes.count + bound) }
        var unwritten = 0
        bytes.append(addingCapacity: bound) { span in
            span.withUnsafeMutableBufferPointer { free, initialized in
                var cursor = WireCursor(UnsafeMutableRawBufferPointer(free))
                body(&cursor)
                unwritten = cursor.remaining
                initialized = free.count - unwritten  // UInt8 is trivial: written bytes are initialized
            }
        }
        return unwritten
    }
}
