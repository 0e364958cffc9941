#if canImport(CLibdeflate)
import CLibdeflate
#endif
import ChecklistModel

/// One-shot zlib (RFC 1950) compression of frame bodies, whole buffers at a
/// time. Both directions are bounded: compression gives up when the output
/// would exceed `limit` (it would not pay), and decompression refuses to
/// inflate past `limit` bytes, so a small hostile body cannot exhaust memory.
///
/// On Linux the work is libdeflate's (compressors and decompressors reused
/// from small pools, never one per call); elsewhere the zlib library's. The
/// format on the wire is the same zlib stream either way. Frame bodies are
/// compressed by `FrameDeflater` instead (faster on page-sized bodies) and
/// inflated here.
public enum Zlib {
    /// The library that compresses and inflates here: `"libdeflate"` or `"zlib"`.
    public static var library: String {
        #if canImport(CLibdeflate)
        "libdeflate"
        #else
        "zlib"
        #endif
    }

    /// Compresses `input` and appends the zlib stream to `out` (replacing its
    /// contents). Returns false, leaving `out` unspecified, when the result
    /// would be longer than `limit` bytes or compression fails. `level`
    /// runs from 1 (fastest) to 9 (smallest), as zlib's.
    public static func compress(_ input: UnsafeRawBufferPointer, into out: inout [UInt8], limit: Int, level: Int32 = 1) -> Bool {
        let level = min(max(level, 1), 9)
        #if canImport(CLibdeflate)
        return LibdeflateCodec.compress(input, into: &out, limit: limit, level: level)
        #else
        return ZlibLibraryCodec.compress(input, into: &out, limit: limit, level: level)
        #endif
    }

    /// Inflates a zlib stream. Throws `FRAME_TOO_LARGE` when the output would
    /// exceed `limit` bytes and `BAD_FIELD body` when the stream is corrupt,
    /// truncated or followed by extra bytes.
    public static func decompress(_ input: UnsafeRawBufferPointer, limit: Int) throws(ChecklistError) -> [UInt8] {
        #if canImport(CLibdeflate)
        return try LibdeflateCodec.withInflated(input, limit: limit) { (raw) throws(ChecklistError) in Array(raw) }
        #else
        return try ZlibLibraryCodec.decompress(input, limit: limit)
        #endif
    }

    /// Inflates a zlib stream like `decompress` and lends the result to
    /// `body`, without an array of its own where the library allows: the
    /// bytes are valid only during the call.
    public static func withDecompressed<R>(_ input: UnsafeRawBufferPointer, limit: Int,
                                           _ body: (UnsafeRawBufferPointer) throws(ChecklistError) -> R) throws(ChecklistError) -> R {
        #if canImport(CLibdeflate)
        return try LibdeflateCodec.withInflated(input, limit: limit, body)
        #else
        let inflated = try ZlibLibraryCodec.decompress(input, limit: limit)
        // `withUnsafeBytes` only rethrows untyped; carry the typed error out in a Result.
        let result = inflated.withUnsafeBytes { (raw) in Result { () throws(ChecklistError) in try body(raw) } }
        return try result.get()
        #endif
    }

    static func tooLarge(_ limit: Int) -> ChecklistError {
        ChecklistError(.frameTooLarge, "compressed body inflates past \(limit) bytes")
    }

    static var trailingBytes: ChecklistError { .badField("body", "bytes after the end of the zlib stream") }

    static var corrupt: ChecklistError { .badField("body", "compressed body is not a valid zlib stream") }
}
