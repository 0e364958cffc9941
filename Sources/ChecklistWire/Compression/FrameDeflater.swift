#if canImport(CLibdeflate)
import CLibdeflate
#else
import CZlib
#endif

/// The compressor of frame bodies: a zlib stream (RFC 1950) holding one
/// DEFLATE block (RFC 1951) coded with the fixed Huffman codes of section
/// 3.2.6, its matches found greedily through a small hash table of 4-byte
/// prefixes, every match at least 4 bytes long and at most 32 KiB back.
///
/// Written for what frames carry: bodies of a few kilobytes whose rows
/// repeat their layout. On a 100-row page it is about five times faster
/// than libdeflate's fastest level, whose cost on such a body is mostly
/// fixed (a 128 KiB hash table set up per call, a hash insert at every
/// byte of every match, Huffman codes built per block), for a stream
/// about a quarter longer. Any inflater reads it: the wire format is the
/// zlib stream either way (`Zlib.decompress` inflates it with libdeflate).
public enum FrameDeflater {
    /// Compresses `input` and puts the zlib stream in `out` (replacing its
    /// contents). Returns false, leaving `out` unspecified, when the stream
    /// would be longer than `limit` bytes.
    public static func compress(_ input: UnsafeRawBufferPointer, into out: inout [UInt8], limit: Int) -> Bool {
        out.removeAll(keepingCapacity: true)
        guard limit > 0 else { return false }
        var written = 0
        out = [UInt8](unsafeUninitializedCapacity: limit) { dst, initialized in
            written = workspaces.with { workspace in
                guard let workspace else { return 0 }
                return deflate(input, into: UnsafeMutableRawBufferPointer(dst), table: workspace.table)
            }
            initialized = written
        }
        return written > 0
    }

    /// Replaces `bytes[start...]` by its zlib stream when that is shorter;
    /// returns whether it did. The stream is written to a pooled buffer
    /// and copied back over the bytes it replaces: no array per call.
    static func compressInPlace(_ bytes: inout [UInt8], from start: Int) -> Bool {
        let count = bytes.count - start
        guard count > 1 else { return false }
        return workspaces.with { workspace in
            guard let workspace else { return false }
            let output = workspace.output(count - 1)
            let written = bytes.withUnsafeBytes { raw in
                deflate(UnsafeRawBufferPointer(rebasing: raw[start...]), into: output, table: workspace.table)
            }
            guard written > 0 else { return false }
            bytes.withUnsafeMutableBytes { raw in
                (raw.baseAddress! + start).copyMemory(from: output.baseAddress!, byteCount: written)
            }
            bytes.removeLast(count - written)
            workspace.trim()
            return true
        }
    }

    /// Free workspaces: as many as threads compress at once.
    private static let workspaces = ReusePool<Workspace>(capacity: 8) { Workspace() }

    /// Bits of the hash of a 4-byte prefix: a table of 4,096 positions
    /// (16 KiB, cleared per call), plenty for bodies of a few kilobytes.
    static let hashBits = 12

    /// Writes the zlib stream of `input` to `out`; returns its length, or 0
    /// when it does not fit. `table` holds `1 << hashBits` entries.
    static func deflate(_ input: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer,
                        table: UnsafeMutablePointer<UInt32>) -> Int {
        // The header (2), the end of the block and the last bits (up to 6
        // bytes after the last 4-byte store), the Adler-32 (4).
        guard out.count >= 12, let dst = out.baseAddress else { return 0 }
        let codes = FixedHuffmanCodes.shared
        // CMF 0x78: deflate with a 32 KiB window; FLG 0x01: no dictionary,
        // FLEVEL 0 ("fastest"), FCHECK making 0x7801 a multiple of 31.
        dst.storeBytes(of: 0x78, as: UInt8.self)
        dst.storeBytes(of: 0x01, toByteOffset: 1, as: UInt8.self)
        var o = 2
        // Four-byte stores stop where the tail (up to 10 bytes) still fits.
        let storeEnd = out.count - 10
        var bits = BitBuffer()
        bits.put(0b011, count: 3)  // BFINAL 1, BTYPE 01 (fixed Huffman codes)

        let n = input.count
        if n > 0, let src = input.baseAddress {
            table.initialize(repeating: 0, count: 1 << hashBits)  // 0: empty; else position + 1
            var i = 0
            while i + 4 <= n {
                let prefix = src.loadUnaligned(fromByteOffset: i, as: UInt32.self)
                let slot = Int((prefix &* 2_654_435_761) >> UInt32(32 - hashBits))
                let candidate = Int(table[slot]) - 1
                table[slot] = UInt32(i + 1)
                if candidate >= 0, i - candidate <= 32_768,
                   src.loadUnaligned(fromByteOffset: candidate, as: UInt32.self) == prefix {
                    let longest = min(258, n - i)
                    var length = 4
                    while length < longest,
                          src.load(fromByteOffset: candidate + length, as: UInt8.self)
                            == src.load(fromByteOffset: i + length, as: UInt8.self) {
                        length += 1
                    }
                    let (value, count) = codes.match(length: length, distance: i - candidate)
                    bits.put(value, count: count)
                    i += length
                } else {
                    let literal = codes.literals[Int(src.load(fromByteOffset: i, as: UInt8.self))]
                    bits.put(UInt64(literal & 0xFFFF), count: Int(literal >> 16))
                    i += 1
                }
                if bits.count >= 32 {
                    guard o <= storeEnd else { return 0 }
                    bits.store32(to: dst + o)
                    o += 4
                }
            }
            while i < n {
                let literal = codes.literals[Int(src.load(fromByteOffset: i, as: UInt8.self))]
                bits.put(UInt64(literal & 0xFFFF), count: Int(literal >> 16))
                i += 1
                if bits.count >= 32 {
                    guard o <= storeEnd else { return 0 }
                    bits.store32(to: dst + o)
                    o += 4
                }
            }
        }
        bits.put(0, count: 7)  // end of block: symbol 256, seven 0 bits
        // Fewer than 39 bits are left: at most 5 bytes, then the Adler-32.
        let tail = (bits.count + 7) / 8
        guard o + tail + 4 <= out.count else { return 0 }
        for _ in 0..<tail {
            dst.storeBytes(of: bits.takeByte(), toByteOffset: o, as: UInt8.self)
            o += 1
        }
        let checksum = adler32(input)
        for shift in stride(from: 24, through: 0, by: -8) {
            dst.storeBytes(of: UInt8(truncatingIfNeeded: checksum >> UInt32(shift)), toByteOffset: o, as: UInt8.self)
            o += 1
        }
        return o
    }

    /// The Adler-32 of `input` (RFC 1950 section 8), from the library at hand.
    static func adler32(_ input: UnsafeRawBufferPointer) -> UInt32 {
        #if canImport(CLibdeflate)
        return libdeflate_adler32(1, input.baseAddress, input.count)
        #else
        return UInt32(CZlib.adler32(1, input.baseAddress?.assumingMemoryBound(to: Bytef.self), uInt(input.count)))
        #endif
    }
}

/// DEFLATE's bit order: codes fill each byte from its low bit (RFC 1951
/// section 3.1.1). Holds fewer than 64 bits; the writer stores 4 bytes
/// whenever 32 are held, and no code put at once exceeds 31 bits.
struct BitBuffer {
    private var value: UInt64 = 0
    private(set) var count = 0

    @inline(__always) mutating func put(_ bits: UInt64, count n: Int) {
        value |= bits << UInt64(count)
        count += n
    }

    /// Stores the low 32 bits, little-endian, at `p`, and drops them.
    @inline(__always) mutating func store32(to p: UnsafeMutableRawPointer) {
        p.storeBytes(of: UInt32(truncatingIfNeeded: value).littleEndian, as: UInt32.self)
        value >>= 32
        count -= 32
    }

    /// The low 8 bits (the last byte padded with 0 bits), dropped.
    mutating func takeByte() -> UInt8 {
        let byte = UInt8(truncatingIfNeeded: value)
        value >>= 8
        count = max(0, count - 8)
        return byte
    }
}

/// The hash table and the output buffer of one `FrameDeflater` call at a
/// time, freed with this object. `@unchecked Sendable`: only the caller its
/// `ReusePool` lent it to uses it (the pool's mutex hands it on).
final class FrameDeflaterWorkspace: @unchecked Sendable {
    let table = UnsafeMutablePointer<UInt32>.allocate(capacity: 1 << FrameDeflater.hashBits)
    private var buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 << 10, alignment: 16)
    /// The most the output buffer keeps between calls.
    static let keptBytes = 1 << 20

    deinit {
        table.deallocate()
        buffer.deallocate()
    }

    /// The output buffer, at least `count` bytes, as `count` bytes.
    func output(_ count: Int) -> UnsafeMutableRawBufferPointer {
        if buffer.count < count {
            buffer.deallocate()
            buffer = .allocate(byteCount: max(count, buffer.count * 2), alignment: 16)
        }
        return UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
    }

    /// Gives back an output buffer grown past `keptBytes` by a large body.
    func trim() {
        if buffer.count > Self.keptBytes {
            buffer.deallocate()
            buffer = .allocate(byteCount: 16 << 10, alignment: 16)
        }
    }
}

extension FrameDeflater {
    typealias Workspace = FrameDeflaterWorkspace
}
