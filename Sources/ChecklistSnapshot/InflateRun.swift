import CZlib

/// One zlib gzip inflate state (windowBits 31) at a stable heap address,
/// and whether it is inside a member. Used by one thread at a time: the
/// thread that claimed the `InflatePiece` running on it, or the reader
/// that took the piece's result; the piece's lock hands it over, which is
/// what makes sending it safe.
final class InflateStream: @unchecked Sendable {
    let z: UnsafeMutablePointer<z_stream>
    /// False when zlib could not be set up (every run then fails).
    let ready: Bool
    /// A member was started and has not ended yet.
    private(set) var memberOpen = false
    private var membersStarted = 0

    init() {
        z = .allocate(capacity: 1)
        z.initialize(to: z_stream())
        ready = czlib_inflateInit2(z, 31) == Z_OK
    }

    deinit {
        if ready { inflateEnd(z) }
        z.deinitialize(count: 1)
        z.deallocate()
    }

    /// What one run did.
    struct Outcome: Sendable {
        /// Everything inflated, in order.
        var block: InflatedBlock
        /// Input bytes consumed (all of them unless `capped` or `failure`).
        var consumed: Int
        /// Stopped because `block` reached the cap: the rest of the input
        /// is still to be inflated, from `consumed` on.
        var capped = false
        /// zlib refused the input at `consumed`: the code and message of
        /// the error to report once `block` was handed out.
        var failure: (code: SnapshotError.Code, message: String)?
    }

    /// Inflates `input` as `GzipInflater` does the same bytes: across member
    /// ends (a member that ends resets the stream for the next), producing at
    /// most `cap` bytes. The output of the zlib call that fails is dropped,
    /// as `GzipInflater` drops it: calls make at most `callBytes` each, as
    /// a decoder asks for them.
    ///
    /// The block's CRC-32 comes from the one zlib keeps of each member's
    /// output (`adler`, to check the member's trailer): a member begun in
    /// an earlier run counts from where that run left it.
    func run(_ input: UnsafeRawBufferPointer, cap: Int) -> Outcome {
        var outcome = Outcome(block: InflatedBlock(capacity: min(cap, Self.capacityGuess(for: input))), consumed: 0)
        guard ready else {
            outcome.failure = (.io, "zlib inflateInit2 failed")
            return outcome
        }
        defer {
            z.pointee.next_in = nil
            z.pointee.avail_in = 0
            z.pointee.next_out = nil
            z.pointee.avail_out = 0
        }
        // The output of the member being inflated: where it starts in the
        // block, and its CRC before this run (0 for a member begun here).
        var part = (start: 0, crcBefore: memberOpen ? UInt32(truncatingIfNeeded: z.pointee.adler) : 0)
        inflate(input, cap: cap, into: &outcome) { block in
            block.appendCRC(memberCRC(since: part.crcBefore, bytes: block.count - part.start), bytes: block.count - part.start)
            part = (block.count, 0)
        }
        if outcome.failure != nil {
            // zlib's CRC counts the output dropped: take it from the bytes.
            outcome.block.recomputeCRC()
        } else if outcome.block.count > part.start {
            outcome.block.appendCRC(memberCRC(since: part.crcBefore, bytes: outcome.block.count - part.start),
                                    bytes: outcome.block.count - part.start)
        }
        return outcome
    }

    /// Room to inflate `input` into without growing on the way: what its
    /// last four bytes say when they are a member's trailer (RFC 1952
    /// ISIZE: a stretch usually ends where a member does), else four times
    /// its size; plus the room `inflate` keeps ahead of each call. Only a
    /// guess: a wrong one costs memory or a copy, never the output.
    static func capacityGuess(for input: UnsafeRawBufferPointer) -> Int {
        let trailer = input.count >= 18 ? Int(UInt32(littleEndian: input.loadUnaligned(fromByteOffset: input.count - 4, as: UInt32.self))) : 0
        let expected = trailer > 0 && trailer <= 64 * input.count ? trailer : input.count * 4
        return max(64 << 10, expected + Self.step)
    }

    /// Output room `inflate` makes sure of before each zlib call.
    static let step = 256 << 10

    /// The CRC-32 of the last `bytes` of the open member's output, from
    /// zlib's CRC of all of it and `crcBefore`, the CRC of the output before
    /// them (CRC-32 is linear: crc(A B) = crc(A) shifted by |B| xor crc(B)).
    private func memberCRC(since crcBefore: UInt32, bytes: Int) -> UInt32 {
        let all = UInt32(truncatingIfNeeded: z.pointee.adler)
        guard crcBefore != 0 else { return all }
        return all ^ UInt32(truncatingIfNeeded: crc32_combine(uLong(crcBefore), 0, off_t(bytes)))
    }

    /// The loop of `run`; `memberEnded` is given the block as each
    /// member's output in it is complete.
    private func inflate(_ input: UnsafeRawBufferPointer, cap: Int, into outcome: inout Outcome,
                         memberEnded: (InflatedBlock) -> Void) {
        let step = Self.step
        let callBytes = 64 << 10
        var outputFull = false
        while outcome.consumed < input.count || outputFull {
            guard outcome.block.reserve(step, limit: cap) || outcome.block.reserve(1, limit: cap) else {
                outcome.capped = true
                return
            }
            if !memberOpen {
                if membersStarted > 0 { inflateReset(z) }
                membersStarted += 1
                memberOpen = true
            }
            let free = outcome.block.free
            let available = min(input.count - outcome.consumed, Int(UInt32.max))
            let room = min(free.count, callBytes)
            z.pointee.next_in = UnsafeMutablePointer(mutating: (input.baseAddress! + outcome.consumed).assumingMemoryBound(to: Bytef.self))
            z.pointee.avail_in = uInt(available)
            z.pointee.next_out = free.baseAddress!.assumingMemoryBound(to: Bytef.self)
            z.pointee.avail_out = uInt(room)
            let rc = CZlib.inflate(z, Z_NO_FLUSH)
            let consumed = available - Int(z.pointee.avail_in)
            let produced = room - Int(z.pointee.avail_out)
            outcome.consumed += consumed
            switch rc {
            case Z_STREAM_END:
                memberOpen = false
                outcome.block.added(produced)
                outputFull = false
                memberEnded(outcome.block)
            case Z_OK, Z_BUF_ERROR:
                outcome.block.added(produced)
                outputFull = z.pointee.avail_out == 0
                if consumed == 0 && produced == 0 && !outputFull {
                    outcome.failure = (.corruptSnapshot, "not a valid gzip stream: inflate makes no progress")
                    return
                }
            case Z_MEM_ERROR:
                outcome.failure = (.io, "zlib inflate is out of memory")
                return
            default:
                let message = z.pointee.msg.map { String(cString: $0) } ?? "code \(rc)"
                outcome.failure = (.corruptSnapshot, "not a valid gzip stream: \(message)")
                return
            }
        }
    }
}
