#if canImport(CLibdeflate)
import CLibdeflate
#else
import CZlib
#endif

/// CRC-32 (ISO-HDLC, the one gzip and zlib use). On Linux computed by
/// libdeflate (carry-less multiplication where the CPU has it: about a
/// fifth of zlib's time on a 100-byte log record), elsewhere by zlib.
public enum CRC32 {
    /// Continues `crc` over `bytes`; start with 0.
    @inlinable
    public static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        #if canImport(CLibdeflate)
        return libdeflate_crc32(crc, base, bytes.count)
        #else
        return UInt32(truncatingIfNeeded: crc32_z(uLong(crc), base.assumingMemoryBound(to: Bytef.self), z_size_t(bytes.count)))
        #endif
    }

    /// The CRC-32 of `bytes`.
    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { update(0, $0) }
    }
}
