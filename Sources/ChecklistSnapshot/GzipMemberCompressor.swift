#if canImport(CLibdeflate)
import CLibdeflate
#endif

/// Compresses one whole block into one complete gzip member (RFC 1952: no
/// flags, `MTIME` 0), as `BlockCompressor`'s workers do. On Linux with
/// libdeflate, whole buffers at once: at level 1 about a third of zlib's
/// time for a smaller member (Protocol/SNAPSHOT.md section 9); elsewhere
/// zlib's deflate, one member per block. Either way the member is what a
/// gzip reader (and `ParallelGzipInflater`) expects. Used by one thread.
final class GzipMemberCompressor {
    #if canImport(CLibdeflate)
    private let handle: OpaquePointer

    /// `level` 1 (fastest) ... 9, as zlib's.
    init(level: Int32) throws(SnapshotError) {
        guard (0...9).contains(level), let handle = libdeflate_alloc_compressor(level) else {
            throw SnapshotError(.io, "libdeflate_alloc_compressor failed (level \(level))")
        }
        self.handle = handle
    }

    deinit { libdeflate_free_compressor(handle) }

    /// The gzip member of `block`, in `member` (its old bytes replaced).
    func compress(_ block: UnsafeRawBufferPointer, into member: inout [UInt8]) throws(SnapshotError) {
        let bound = libdeflate_gzip_compress_bound(handle, block.count)
        var written = 0
        // Written by libdeflate, never zero-filled first.
        member = [UInt8](unsafeUninitializedCapacity: bound) { out, initialized in
            written = libdeflate_gzip_compress(handle, block.baseAddress, block.count, out.baseAddress, out.count)
            initialized = written
        }
        // The bound always fits: 0 would be libdeflate failing its own bound.
        guard written > 0 else { throw SnapshotError(.io, "libdeflate_gzip_compress failed (\(block.count) bytes)") }
    }
    #else
    private let deflater: GzipDeflater

    /// `level` 1 (fastest) ... 9, as zlib's.
    init(level: Int32) throws(SnapshotError) {
        deflater = try GzipDeflater(level: level)
    }

    /// The gzip member of `block`, in `member` (its old bytes replaced).
    func compress(_ block: UnsafeRawBufferPointer, into member: inout [UInt8]) throws(SnapshotError) {
        member.removeAll(keepingCapacity: true)
        member.reserveCapacity(block.count / 2 + 1024)
        deflater.reset()
        try deflater.compress(block, finish: true) { (chunk) throws(SnapshotError) in member.append(contentsOf: chunk) }
    }
    #endif
}
