/// Fixed-width big-endian integers at a known offset, for the formats that
/// are read by position rather than in sequence (frame headers, log segment
/// and record headers, the snapshot preamble). The caller has checked that
/// the bytes are there. `WireReader` reads its u32 with the same code.
extension UnsafeRawBufferPointer {
    /// The big-endian u16 at `offset`.
    @inlinable
    public func u16BE(at offset: Int) -> UInt16 {
        UInt16(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    /// The big-endian u32 at `offset`.
    @inlinable
    public func u32BE(at offset: Int) -> UInt32 {
        UInt32(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    /// The big-endian u64 at `offset`.
    @inlinable
    public func u64BE(at offset: Int) -> UInt64 {
        UInt64(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}
