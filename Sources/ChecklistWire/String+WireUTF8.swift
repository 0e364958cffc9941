/// The two ways a String meets the wire's bytes: made from a field's UTF-8
/// (checked), and read as UTF-8 to be written.
extension String {
    /// `bytes` as a String when they are valid UTF-8, nil when they are
    /// not: what `String(validating: bytes, as: UTF8.self)` gives. That
    /// initializer reaches an unspecialized generic validation in the
    /// standard library (two type metadata lookups per call, most of the
    /// cost of a short text); this one decodes through the specialized
    /// `String(decoding:as:)` and checks that nothing was repaired.
    @inlinable
    public init?(wireUTF8 bytes: UnsafeRawBufferPointer) {
        let decoded = String(decoding: bytes, as: UTF8.self)
        // ASCII (most texts) is valid UTF-8: nothing was repaired.
        if Self.isASCII(bytes) {
            self = decoded
            return
        }
        // Decoding replaces each invalid sequence with U+FFFD (EF BF BD).
        // At the first invalid byte the input cannot itself read EF BF BD
        // (that would be a valid sequence), so a repaired text always
        // differs from its input: the same bytes mean valid UTF-8.
        guard decoded.utf8.count == bytes.count else { return nil }
        guard decoded.withWireUTF8({ Self.sameBytes($0, bytes) }) else { return nil }
        self = decoded
    }

    /// Whether every byte of `bytes` is below 0x80 (8 at a time).
    @inlinable
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        var high: UInt64 = 0
        var i = 0
        while i + 8 <= count {
            high |= bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < count {
            high |= UInt64(bytes[i])
            i += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// Whether `a` and `b`, of the same count, hold the same bytes (8 at a time).
    @inlinable
    static func sameBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let count = a.count
        var i = 0
        while i + 8 <= count {
            guard a.loadUnaligned(fromByteOffset: i, as: UInt64.self) == b.loadUnaligned(fromByteOffset: i, as: UInt64.self) else {
                return false
            }
            i += 8
        }
        while i < count {
            guard a[i] == b[i] else { return false }
            i += 1
        }
        return true
    }

    /// Calls `body` with the text's UTF-8 bytes: borrowed from a native
    /// String (no copy, no uniqueness check), from a copy otherwise.
    @inlinable @inline(__always)
    public func withWireUTF8<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        if let result = utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) { return result }
        var copy = self
        return copy.withUTF8 { body(UnsafeRawBufferPointer($0)) }
    }
}
