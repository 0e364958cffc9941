import CZlib

/// Streaming gzip (RFC 1952) compression: zlib's deflate with windowBits 31.
/// The `z_stream` lives at a stable heap address owned by this object;
/// `next_in`/`next_out` point into caller buffers only inside the unsafe
/// buffer closures and are cleared before they return. Output leaves in
/// chunks of a fixed, reused buffer.
final class GzipDeflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private let out: UnsafeMutableRawBufferPointer
    /// Compressed bytes produced so far.
    private(set) var totalOut: UInt64 = 0

    /// `level` 0 (store) ... 9 (smallest); 1 is fastest.
    init(level: Int32, chunkBytes: Int = 64 * 1024) throws(SnapshotError) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        out = .allocate(byteCount: chunkBytes, alignment: 16)
        guard czlib_deflateInit2(stream, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) == Z_OK else {
            out.deallocate()
            stream.deallocate()
            throw SnapshotError(.io, "zlib deflateInit2 failed (level \(level))")
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        out.deallocate()
    }

    /// Compresses `input`, handing every full output chunk to `emit`. With
    /// `finish`, ends the gzip member (trailer with CRC-32 and size) and
    /// emits the rest; the deflater can then be `reset()` for a new member.
    func compress(_ input: UnsafeRawBufferPointer, finish: Bool,
                  emit: (UnsafeRawBufferPointer) throws(SnapshotError) -> Void) throws(SnapshotError) {
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        defer { stream.pointee.next_in = nil; stream.pointee.avail_in = 0 }
        let flush = finish ? Z_FINISH : Z_NO_FLUSH
        while true {
            stream.pointee.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(out.count)
            let rc = deflate(stream, flush)
            let produced = out.count - Int(stream.pointee.avail_out)
            stream.pointee.next_out = nil
            stream.pointee.avail_out = 0
            guard rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR else {
                throw SnapshotError(.io, "zlib deflate failed (\(rc))")
            }
            if produced > 0 {
                totalOut += UInt64(produced)
                try emit(UnsafeRawBufferPointer(rebasing: out[0..<produced]))
            }
            if finish {
                if rc == Z_STREAM_END { return }
            } else if stream.pointee.avail_in == 0 && produced < out.count {
                return
            }
        }
    }

    /// Starts a new gzip member with the same settings.
    func reset() {
        deflateReset(stream)
    }
}
