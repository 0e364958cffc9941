import CZlib

/// CRC-32 (ISO-HDLC, the one gzip and zlib use), computed by zlib's `crc32`.
public enum CRC32 {
    /// Continues `crc` over `bytes`; start with 0.
    @inlinable
    public static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        return UInt32(truncatingIfNeeded: crc32_z(uLong(crc), base.assumingMemoryBound(to: Bytef.self), z_size_t(bytes.count)))
    }

    /// The CRC-32 of `bytes`.
    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { update(0, $0) }
    }
}
