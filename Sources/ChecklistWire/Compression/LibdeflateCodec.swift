#if canImport(CLibdeflate)
import CLibdeflate
import ChecklistModel

/// `Zlib`'s codec on Linux: libdeflate, whole buffers, its compressors and
/// decompressors reused from pools (allocating a compressor costs more
/// than compressing a page).
enum LibdeflateCodec {
    /// Free compressors per level (index = level, 1...9), a few per level:
    /// as many as threads compress at once.
    private static let compressors: [ReusePool<DeflateCompressor>] = (0...9).map { level in
        ReusePool(capacity: 8) { DeflateCompressor(level: Int32(level)) }
    }

    private static let inflaters = ReusePool<ZlibInflater>(capacity: 8) { ZlibInflater() }

    /// As `Zlib.compress`; `level` is 1...9.
    static func compress(_ input: UnsafeRawBufferPointer, into out: inout [UInt8], limit: Int, level: Int32) -> Bool {
        out.removeAll(keepingCapacity: true)
        guard limit > 0 else { return false }
        return compressors[Int(level)].with { compressor in
            guard let compressor else { return false }
            var written = 0
            // Written by libdeflate, never zero-filled first.
            out = [UInt8](unsafeUninitializedCapacity: limit) { dst, initialized in
                written = compressor.compress(input, into: UnsafeMutableRawBufferPointer(dst))
                initialized = written
            }
            return written > 0
        }
    }

    /// As `Zlib.withDecompressed`.
    static func withInflated<R>(_ input: UnsafeRawBufferPointer, limit: Int,
                                _ body: (UnsafeRawBufferPointer) throws(ChecklistError) -> R) throws(ChecklistError) -> R {
        try inflaters.with { (inflater) throws(ChecklistError) -> R in
            guard let inflater else { throw ChecklistError(.internalError, "libdeflate_alloc_decompressor failed") }
            defer { inflater.trim() }
            return try body(try inflater.inflate(input, limit: limit))
        }
    }
}

/// One libdeflate compressor of one level, freed with this object.
/// `@unchecked Sendable`: it is only used by the caller its `ReusePool`
/// lent it to (the pool's mutex hands it from one caller to the next).
final class DeflateCompressor: @unchecked Sendable {
    private let handle: OpaquePointer

    init?(level: Int32) {
        guard let handle = libdeflate_alloc_compressor(level) else { return nil }
        self.handle = handle
    }

    deinit { libdeflate_free_compressor(handle) }

    /// Writes the zlib stream of `input` to `out`; returns its length, or 0
    /// when it does not fit.
    func compress(_ input: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) -> Int {
        guard let dst = out.baseAddress, out.count > 0 else { return 0 }
        return libdeflate_zlib_compress(handle, input.baseAddress, input.count, dst, out.count)
    }
}

/// One libdeflate decompressor with the buffer it inflates into, freed with
/// this object. libdeflate inflates whole buffers only: a stream that does
/// not fit is inflated again into a buffer twice the size, up to the limit.
/// `@unchecked Sendable`: as `DeflateCompressor`, used by one caller at a time.
final class ZlibInflater: @unchecked Sendable {
    private let handle: OpaquePointer
    private var buffer: UnsafeMutableRawBufferPointer
    /// The buffer's size when fresh, and the most it keeps between calls.
    static let initialBytes = 64 << 10, keptBytes = 1 << 20

    init?() {
        guard let handle = libdeflate_alloc_decompressor() else { return nil }
        self.handle = handle
        buffer = .allocate(byteCount: Self.initialBytes, alignment: 16)
    }

    deinit {
        libdeflate_free_decompressor(handle)
        buffer.deallocate()
    }

    /// Inflates `input` (a whole zlib stream) into the buffer; the result is
    /// valid until the next call.
    func inflate(_ input: UnsafeRawBufferPointer, limit: Int) throws(ChecklistError) -> UnsafeRawBufferPointer {
        while true {
            let room = min(max(limit, 0), buffer.count)
            var consumed = 0, produced = 0
            let result = libdeflate_zlib_decompress_ex(handle, input.baseAddress, input.count,
                                                       buffer.baseAddress, room, &consumed, &produced)
            switch result {
            case LIBDEFLATE_SUCCESS:
                guard consumed == input.count else { throw Zlib.trailingBytes }
                return UnsafeRawBufferPointer(rebasing: buffer[0..<produced])
            case LIBDEFLATE_INSUFFICIENT_SPACE:
                guard room < limit else { throw Zlib.tooLarge(limit) }
                grow(to: min(limit, buffer.count * 2))
            default:
                throw Zlib.corrupt
            }
        }
    }

    /// Gives back a buffer grown past `keptBytes` by a large body.
    func trim() {
        if buffer.count > Self.keptBytes { grow(to: Self.initialBytes) }
    }

    private func grow(to count: Int) {
        buffer.deallocate()
        buffer = .allocate(byteCount: count, alignment: 16)
    }
}
#endif
