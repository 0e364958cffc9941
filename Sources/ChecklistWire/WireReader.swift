import ChecklistModel

/// Reads the body encodings of Protocol/SPEC.md section 3 from a borrowed
/// buffer. Every read checks the remaining length and throws `BAD_FIELD`
/// naming the field on short or invalid input; nothing traps.
///
/// The reader borrows its bytes: create it inside a `withUnsafeBytes`
/// closure and do not let it escape.
public struct WireReader {
    @usableFromInline let bytes: UnsafeRawBufferPointer
    /// Index of the next unread byte (stored apart from `index` so that the
    /// inlinable reads below can advance it).
    @usableFromInline var position: Int

    /// Index of the next unread byte.
    @inlinable public var index: Int { position }

    public init(_ bytes: UnsafeRawBufferPointer) {
        self.init(bytes, from: 0)
    }

    /// A reader whose next byte is `bytes[index]` (e.g. the first row of a
    /// body whose header was read before).
    @inlinable public init(_ bytes: UnsafeRawBufferPointer, from index: Int) {
        precondition(index >= 0 && index <= bytes.count, "WireReader: start \(index) outside the \(bytes.count) bytes")
        self.bytes = bytes
        self.position = index
    }

    /// Bytes not yet read. Receivers ignore them at the end of a body
    /// (forward compatibility).
    @inlinable public var remaining: Int { bytes.count - position }

    @inlinable @inline(__always)
    public mutating func readU8(_ field: String) throws(ChecklistError) -> UInt8 {
        guard position < bytes.count else { throw Self.endsInside(field) }
        let b = bytes[position]
        position += 1
        return b
    }

    /// The error of a body that ends inside `field` (out of line: the
    /// reads above stay small enough to inline).
    @usableFromInline @inline(never)
    static func endsInside(_ field: String) -> ChecklistError {
        .badField(field, "body ends inside \(field)")
    }

    public mutating func readBool(_ field: String) throws(ChecklistError) -> Bool {
        switch try readU8(field) {
        case 0: return false
        case 1: return true
        case let b: throw .badField(field, "\(field) must be 0 or 1, got \(b)")
        }
    }

    /// Unsigned LEB128, at most 10 bytes, value must fit in 64 bits.
    @inlinable @inline(__always)
    public mutating func readVarint(_ field: String) throws(ChecklistError) -> UInt64 {
        // One byte (values below 128: most counts, flags and lengths) inline.
        if position < bytes.count {
            let b = bytes[position]
            if b < 0x80 {
                position += 1
                return UInt64(b)
            }
        }
        return try readLongVarint(field)
    }

    /// `readVarint` past its one-byte case, and its errors.
    @usableFromInline @inline(never)
    mutating func readLongVarint(_ field: String) throws(ChecklistError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        for byte in 0..<10 {
            guard position < bytes.count else { throw .badField(field, "body ends inside varint \(field)") }
            let b = bytes[position]
            position += 1
            if byte == 9 && b > 1 {
                throw .badField(field, "varint \(field) does not fit in 64 bits")
            }
            value |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return value }
            shift += 7
        }
        throw .badField(field, "varint \(field) is longer than 10 bytes")
    }

    /// A varint that must fit in `Int` and lie in `range`.
    public mutating func readCount(_ field: String, max: Int) throws(ChecklistError) -> Int {
        let v = try readVarint(field)
        guard v <= UInt64(max) else { throw .badField(field, "\(field) \(v) is larger than \(max)") }
        return Int(v)
    }

    @inlinable public mutating func readZigZag(_ field: String) throws(ChecklistError) -> Int64 {
        let u = try readVarint(field)
        return Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
    }

    /// A big-endian u32 (fixed width: lengths written after their content).
    public mutating func readU32BE(_ field: String) throws(ChecklistError) -> UInt32 {
        guard remaining >= 4 else { throw .badField(field, "\(field) is cut off") }
        defer { position += 4 }
        return bytes.u32BE(at: position)
    }

    /// The next `count` bytes, borrowed from the underlying buffer.
    public mutating func readSlice(_ field: String, count: Int) throws(ChecklistError) -> UnsafeRawBufferPointer {
        guard count >= 0, count <= remaining else {
            throw .badField(field, "\(field) length \(count) runs past the end of the body")
        }
        let start = position
        position += count
        return UnsafeRawBufferPointer(rebasing: bytes[start..<position])
    }

    /// A length-prefixed byte run, borrowed from the underlying buffer.
    @inlinable public mutating func readByteSlice(_ field: String) throws(ChecklistError) -> UnsafeRawBufferPointer {
        let length = try readVarint(field)
        guard length <= UInt64(remaining) else {
            throw .badField(field, "\(field) length \(length) runs past the end of the body")
        }
        let start = position
        position += Int(length)
        return UnsafeRawBufferPointer(rebasing: bytes[start..<position])
    }

    public mutating func readBytes(_ field: String) throws(ChecklistError) -> [UInt8] {
        Array(try readByteSlice(field))
    }

    /// A length-prefixed UTF-8 string; invalid UTF-8 is `BAD_FIELD`.
    public mutating func readString(_ field: String) throws(ChecklistError) -> String {
        let raw = try readByteSlice(field)
        guard let s = String(wireUTF8: raw) else {
            throw .badField(field, "\(field) is not valid UTF-8")
        }
        return s
    }

    /// A presence mask; bits outside `known` are `BAD_FIELD`.
    public mutating func readPresence(_ field: String = "presence", known: UInt8) throws(ChecklistError) -> UInt8 {
        let p = try readU8(field)
        guard p & ~known == 0 else {
            throw .badField(field, "unknown \(field) bits 0x\(String(p & ~known, radix: 16))")
        }
        return p
    }
}

extension WireReader {
    /// Decodes `body` with `decode`, which must not let the reader escape.
    public static func decode<T>(_ body: [UInt8], _ decode: (inout WireReader) throws(ChecklistError) -> T) throws(ChecklistError) -> T {
        // withUnsafeBytes rethrows untyped errors: carry the typed one out in a Result.
        let result = body.withUnsafeBytes { raw in
            Result { () throws(ChecklistError) -> T in
                var reader = WireReader(raw)
                return try decode(&reader)
            }
        }
        return try result.get()
    }
}
