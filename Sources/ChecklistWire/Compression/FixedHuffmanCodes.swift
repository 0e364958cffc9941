/// The fixed Huffman codes of DEFLATE (RFC 1951 section 3.2.6) as
/// `FrameDeflater` writes them: each code bit-reversed (Huffman codes are
/// sent from their most significant bit, the rest of the stream from the
/// least), lengths and distances with their extra bits (section 3.2.5).
/// Built once; read-only after.
///
/// `@unchecked Sendable`: the tables are written in `init` only and never
/// freed (one instance, `shared`), so any thread may read them.
final class FixedHuffmanCodes: @unchecked Sendable {
    static let shared = FixedHuffmanCodes()

    /// Per byte value: its code in the low 16 bits, the code's length above.
    let literals: UnsafeMutablePointer<UInt32>
    /// Per match length 3...258: the length symbol's code followed by the
    /// extra bits, in the low 16 bits; their count above.
    private let lengths: UnsafeMutablePointer<UInt32>
    /// The distance symbol of distance `d`: entry `d - 1` below 257, entry
    /// `256 + (d - 1) >> 7` beyond (every larger symbol's range starts at a
    /// multiple of 128, plus one).
    private let distanceSymbols: UnsafeMutablePointer<UInt8>
    /// Per distance symbol 0...29: its 5-bit code (reversed), first
    /// distance and count of extra bits.
    private let distanceCodes: UnsafeMutablePointer<UInt32>
    private let distanceBases: UnsafeMutablePointer<Int>
    private let distanceExtraBits: UnsafeMutablePointer<Int>

    private init() {
        literals = .allocate(capacity: 256)
        lengths = .allocate(capacity: 259)
        distanceSymbols = .allocate(capacity: 512)
        distanceCodes = .allocate(capacity: 30)
        distanceBases = .allocate(capacity: 30)
        distanceExtraBits = .allocate(capacity: 30)
        lengths.initialize(repeating: 0, count: 259)
        distanceSymbols.initialize(repeating: 0, count: 512)

        for value in 0..<256 {
            let (code, count) = Self.literalLengthCode(value)
            literals[value] = Self.reversed(code, count) | UInt32(count) << 16
        }
        // Length symbols 257...284: 3...10 with no extra bits, then four
        // symbols per count of extra bits 1...5; 258 has its own, 285.
        var base = 3
        for k in 0..<28 {
            let extra = k < 8 ? 0 : k / 4 - 1
            let (code, count) = Self.literalLengthCode(257 + k)
            for length in base..<min(base + (1 << extra), 258) {
                let bits = Self.reversed(code, count) | UInt32(length - base) << UInt32(count)
                lengths[length] = bits | UInt32(count + extra) << 16
            }
            base += 1 << extra
        }
        let (code285, count285) = Self.literalLengthCode(285)
        lengths[258] = Self.reversed(code285, count285) | UInt32(count285) << 16
        // Distance symbols 0...29: 1...4 with no extra bits, then two
        // symbols per count of extra bits 1...13.
        var distance = 1
        for symbol in 0..<30 {
            let extra = symbol < 4 ? 0 : symbol / 2 - 1
            distanceCodes[symbol] = Self.reversed(UInt32(symbol), 5)
            distanceBases[symbol] = distance
            distanceExtraBits[symbol] = extra
            for d in distance..<distance + (1 << extra) {
                let index = d <= 256 ? d - 1 : 256 + (d - 1) >> 7
                distanceSymbols[index] = UInt8(symbol)
            }
            distance += 1 << extra
        }
    }

    /// The bits of a match of `length` (3...258) at `distance` (1...32768),
    /// length first, and their count (at most 31).
    @inline(__always) func match(length: Int, distance: Int) -> (UInt64, Int) {
        let l = lengths[length]
        let d = distance - 1
        let symbol = Int(distanceSymbols[d < 256 ? d : 256 + d >> 7])
        let distanceBits = UInt64(distanceCodes[symbol]) | UInt64(distance - distanceBases[symbol]) << 5
        let lengthCount = Int(l >> 16)
        return (UInt64(l & 0xFFFF) | distanceBits << UInt64(lengthCount), lengthCount + 5 + distanceExtraBits[symbol])
    }

    /// The fixed code of a literal/length symbol 0...287, most significant
    /// bit first, and its length.
    private static func literalLengthCode(_ symbol: Int) -> (UInt32, Int) {
        switch symbol {
        case 0...143: (UInt32(0x30 + symbol), 8)
        case 144...255: (UInt32(0x190 + symbol - 144), 9)
        case 256...279: (UInt32(symbol - 256), 7)
        default: (UInt32(0xC0 + symbol - 280), 8)
        }
    }

    private static func reversed(_ code: UInt32, _ count: Int) -> UInt32 {
        var out: UInt32 = 0
        for bit in 0..<count where code & (1 << UInt32(bit)) != 0 {
            out |= 1 << UInt32(count - 1 - bit)
        }
        return out
    }
}
