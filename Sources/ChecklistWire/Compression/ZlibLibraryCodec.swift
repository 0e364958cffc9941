import CZlib
import ChecklistModel

/// Whole-body zlib (RFC 1950) through the zlib library: `Zlib`'s codec
/// where libdeflate is not available (Apple platforms), and the reference
/// the tests compare libdeflate's streams with. A fresh stream per call.
enum ZlibLibraryCodec {
    /// As `Zlib.compress`.
    static func compress(_ input: UnsafeRawBufferPointer, into out: inout [UInt8], limit: Int, level: Int32) -> Bool {
        out.removeAll(keepingCapacity: true)
        guard limit > 0 else { return false }
        var stream = z_stream()
        // memLevel 4, not zlib's default 8: every init zeroes a hash table of
        // 2^(memLevel+8) bytes, 64 KiB at level 8, more than a typical page
        // body. 4 KiB costs a little ratio on bodies this small.
        guard czlib_deflateInit2(&stream, level, Z_DEFLATED, 15, 4, Z_DEFAULT_STRATEGY) == Z_OK else { return false }
        defer { deflateEnd(&stream) }
        var ok = false
        // Written by zlib, never zero-filled first.
        out = [UInt8](unsafeUninitializedCapacity: limit) { dst, initialized in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
            stream.avail_in = uInt(input.count)
            stream.next_out = dst.baseAddress
            stream.avail_out = uInt(dst.count)
            defer { stream.next_in = nil; stream.next_out = nil }
            ok = deflate(&stream, Z_FINISH) == Z_STREAM_END
            initialized = ok ? dst.count - Int(stream.avail_out) : 0
        }
        return ok
    }

    /// As `Zlib.decompress`.
    static func decompress(_ input: UnsafeRawBufferPointer, limit: Int) throws(ChecklistError) -> [UInt8] {
        var stream = z_stream()
        guard czlib_inflateInit2(&stream, 15) == Z_OK else {
            throw ChecklistError(.internalError, "zlib inflateInit2 failed")
        }
        defer { inflateEnd(&stream) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        defer { stream.next_in = nil }
        while true {
            let (rc, produced) = chunk.withUnsafeMutableBytes { dst -> (Int32, Int) in
                stream.next_out = dst.baseAddress?.assumingMemoryBound(to: Bytef.self)
                stream.avail_out = uInt(dst.count)
                defer { stream.next_out = nil }
                let rc = inflate(&stream, Z_NO_FLUSH)
                return (rc, dst.count - Int(stream.avail_out))
            }
            if out.count + produced > limit {
                throw Zlib.tooLarge(limit)
            }
            out.append(contentsOf: chunk[0..<produced])
            switch rc {
            case Z_STREAM_END:
                guard stream.avail_in == 0 else { throw Zlib.trailingBytes }
                return out
            case Z_OK:
                continue
            case Z_BUF_ERROR where produced > 0:
                continue
            default:
                throw Zlib.corrupt
            }
        }
    }
}
