import CZlib

/// Streaming gzip (RFC 1952) decompression: zlib's inflate with windowBits
/// 31, across concatenated members (as written by parallel compression and
/// accepted by `gzip -d`). Compressed input sits in a fixed, reused buffer
/// the caller fills; output goes to buffers the caller lends. The `z_stream`
/// lives at a stable heap address; `next_in`/`next_out` are set only for the
/// duration of one `inflate` call and cleared after.
final class GzipInflater {
    /// What one step of inflation did.
    enum Step: Equatable {
        /// Bytes written to the caller's buffer.
        case produced(Int)
        /// The input buffer is empty: fill it, or call `endInput()`.
        case needInput
        /// Input ended after a complete member: nothing more will come.
        case end
    }

    private let stream: UnsafeMutablePointer<z_stream>
    private let input: UnsafeMutableRawBufferPointer
    private var inStart = 0
    private var inEnd = 0
    private var inputEnded = false
    private var memberOpen = false
    private var membersStarted = 0
    /// Compressed bytes consumed so far (the compressed offset).
    private(set) var totalIn: UInt64 = 0
    /// Bytes produced so far.
    private(set) var totalOut: UInt64 = 0

    init(inputBytes: Int = 64 * 1024) throws(SnapshotError) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        input = .allocate(byteCount: inputBytes, alignment: 16)
        guard czlib_inflateInit2(stream, 31) == Z_OK else {
            input.deallocate()
            stream.deallocate()
            throw SnapshotError(.io, "zlib inflateInit2 failed")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        input.deallocate()
    }

    /// Whether the input buffer is empty (and more input may be given).
    var needsInput: Bool { inStart == inEnd && !inputEnded }

    /// Lets `fill` write into the input buffer's free space; it returns the
    /// number of bytes written (0 means end of input).
    func fillInput<E: Error>(_ fill: (UnsafeMutableRawBufferPointer) throws(E) -> Int) throws(E) {
        if inStart == inEnd { inStart = 0; inEnd = 0 }
        let n = try fill(UnsafeMutableRawBufferPointer(rebasing: input[inEnd...]))
        if n == 0 { inputEnded = true }
        inEnd += n
    }

    /// Copies as much of `bytes` as fits into the input buffer; returns how
    /// many bytes were taken.
    func feed(_ bytes: UnsafeRawBufferPointer) -> Int {
        if inStart == inEnd { inStart = 0; inEnd = 0 }
        let taken = min(input.count - inEnd, bytes.count)
        if taken > 0 {
            UnsafeMutableRawBufferPointer(rebasing: input[inEnd..<(inEnd + taken)])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[0..<taken]))
        }
        inEnd += taken
        return taken
    }

    /// Says that no more input will come.
    func endInput() { inputEnded = true }

    /// Inflates into `output` (not empty). `fail` builds the error for a
    /// corrupt or truncated stream from a message.
    func inflate(into output: UnsafeMutableRawBufferPointer,
                 fail: (SnapshotError.Code, String) -> SnapshotError) throws(SnapshotError) -> Step {
        while true {
            if inStart == inEnd {
                guard inputEnded else { return .needInput }
                if memberOpen || membersStarted == 0 {
                    throw fail(.truncatedSnapshot, membersStarted == 0 ? "file is empty" : "gzip stream ends early (truncated)")
                }
                return .end
            }
            if !memberOpen {
                if membersStarted > 0 { inflateReset(stream) }
                membersStarted += 1
                memberOpen = true
            }
            let available = inEnd - inStart
            stream.pointee.next_in = (input.baseAddress! + inStart).assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_in = uInt(available)
            stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(output.count)
            let rc = CZlib.inflate(stream, Z_NO_FLUSH)
            let consumed = available - Int(stream.pointee.avail_in)
            let produced = output.count - Int(stream.pointee.avail_out)
            let message = stream.pointee.msg.map { String(cString: $0) } ?? "code \(rc)"
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
            stream.pointee.next_out = nil
            stream.pointee.avail_out = 0
            inStart += consumed
            totalIn += UInt64(consumed)
            totalOut += UInt64(produced)
            switch rc {
            case Z_STREAM_END:
                memberOpen = false
            case Z_OK, Z_BUF_ERROR:
                break
            case Z_MEM_ERROR:
                throw SnapshotError(.io, "zlib inflate is out of memory")
            default:
                throw fail(.corruptSnapshot, "not a valid gzip stream: \(message)")
            }
            if produced > 0 { return .produced(produced) }
        }
    }
}
