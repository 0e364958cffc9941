import CZlib

/// The inflated content of one stretch or piece, in memory it owns, with
/// its CRC-32 and what a worker decoded of it. Handed from the worker that
/// fills it to the reader under a lock (the pool's, or the piece's), and
/// touched by one thread at a time: that hand-over is what makes it safe
/// to send.
final class InflatedBlock: @unchecked Sendable {
    private(set) var base: UnsafeMutableRawPointer
    private(set) var count = 0
    private var capacity: Int
    /// The CRC-32 of the content, once the worker finished it.
    private(set) var crc: UInt32 = 0
    /// What the worker decoded of the content (`StretchDecoder`), if anything,
    /// and where in the content those records are.
    private var decoded: DecodedStretch?
    private(set) var decodedRange: Range<Int>?

    init(capacity: Int) {
        self.capacity = max(capacity, 4096)
        base = .allocate(byteCount: self.capacity, alignment: 16)
    }

    deinit { base.deallocate() }

    /// Room for at least `extra` more bytes; false beyond `limit` in all.
    func reserve(_ extra: Int, limit: Int) -> Bool {
        guard count + extra > capacity else { return true }
        guard count + extra <= limit else { return false }
        let grown = min(limit, max(count + extra, capacity * 2))
        let bigger = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
        bigger.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = bigger
        capacity = grown
        return true
    }

    var free: UnsafeMutableRawBufferPointer { UnsafeMutableRawBufferPointer(start: base + count, count: capacity - count) }

    func added(_ n: Int) { count += n }

    /// The content from byte `offset` on.
    func bytes(from offset: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + offset, count: count - offset)
    }

    /// Decodes the records from byte `offset` on with `decode` (on the
    /// worker, before the block is handed over).
    func decode(from offset: Int, with decode: StretchDecoder) {
        guard offset < count, let stretch = decode(bytes(from: offset)) else { return }
        decoded = stretch
        decodedRange = offset..<(offset + stretch.bytes)
    }

    /// Hands out what the worker decoded, keeping no reference to it (a
    /// sink may keep it, e.g. as a list's storage, without sharing it).
    func takeDecoded() -> DecodedStretch? {
        defer { decoded = nil }
        return decoded
    }

    /// Adds the last `bytes` added to the CRC, given their own CRC-32
    /// (zlib takes it of a member to check the member's gzip trailer, so it
    /// costs nothing more).
    func appendCRC(_ partCRC: UInt32, bytes: Int) {
        crc = UInt32(truncatingIfNeeded: crc32_combine(uLong(crc), uLong(partCRC), off_t(bytes)))
    }

    /// Takes the CRC of the whole content anew (where zlib's could not be used).
    func recomputeCRC() {
        crc = CRC32.update(0, bytes(from: 0))
    }

    /// Gives back most of the room a small content did not use, once it is
    /// complete: the reader may keep many small blocks
    /// (`InflatedContentChecksum.maxLookBack`).
    func finish() {
        guard count <= capacity / 4 else { return }
        let exact = UnsafeMutableRawPointer.allocate(byteCount: max(count, 16), alignment: 16)
        exact.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = exact
        capacity = max(count, 16)
    }
}

/// The block an inflater is handing out, and how far: its bytes go out in
/// order, except that the records a worker decoded are offered whole first
/// (`takeDecoded`), so the bytes before them stop short of them.
struct InflatedBlockCursor {
    private var block: InflatedBlock?
    private var offset = 0

    /// Every byte of the block was handed out (or there is none).
    var isExhausted: Bool { block.map { offset == $0.count } ?? true }

    /// Starts handing out `block`.
    mutating func start(_ block: InflatedBlock) {
        self.block = block
        offset = 0
    }

    /// Copies the next bytes into `output`, up to the decoded records if
    /// they come next; 0 once the block is exhausted.
    mutating func copy(into output: UnsafeMutableRawBufferPointer) -> Int {
        guard let block, offset < block.count else {
            block = nil
            return 0
        }
        var end = block.count
        if let range = block.decodedRange, offset < range.lowerBound { end = range.lowerBound }
        let n = min(output.count, end - offset)
        output.baseAddress!.copyMemory(from: block.base + offset, byteCount: n)
        offset += n
        return n
    }

    /// Offers the decoded records when they start exactly here; when
    /// `accept` takes them, their bytes count as handed out and their size
    /// is returned, otherwise nil (the bytes go out by `copy`).
    mutating func takeDecoded(_ accept: (DecodedStretch) throws -> Bool) rethrows -> Int? {
        guard let block, let range = block.decodedRange, range.lowerBound == offset,
              let stretch = block.takeDecoded(), try accept(stretch) else { return nil }
        offset = range.upperBound
        return range.count
    }
}

/// The CRC-32 of the content an inflater handed out, from the CRCs of its
/// blocks (`InflatedBlock.crc`, which the workers took), so that the reader
/// need not checksum those bytes again. The last blocks, at least
/// `maxLookBack` bytes of them, stay in memory, so the CRC up to any offset
/// in them (a trailer's start) can be finished from their bytes.
struct InflatedContentChecksum {
    /// How far back from the last byte `crc(upTo:)` answers.
    let maxLookBack: Int
    /// The CRC-32 of every block added.
    private var total: UInt32 = 0
    /// The last blocks added, with their start and the CRC before them,
    /// oldest first: together at least `maxLookBack` bytes beyond the oldest.
    private var recent: [(start: UInt64, crcBefore: UInt32, block: InflatedBlock)] = []

    init(maxLookBack: Int) {
        self.maxLookBack = maxLookBack
    }

    /// Bytes of the blocks added.
    var bytes: UInt64 {
        guard let last = recent.last else { return 0 }
        return last.start + UInt64(last.block.count)
    }

    /// Adds the next block handed out.
    mutating func add(_ block: InflatedBlock) {
        let start = bytes
        recent.append((start, total, block))
        total = UInt32(truncatingIfNeeded: crc32_combine(uLong(total), uLong(block.crc), off_t(block.count)))
        // Drop the oldest while the others reach back far enough from this
        // one's start (no byte of it was handed out yet).
        while recent.count > 1, start - recent[1].start >= UInt64(maxLookBack) { recent.removeFirst() }
    }

    /// The CRC-32 of the first `offset` bytes, for an offset up to `bytes`
    /// and no more than `maxLookBack` before the last block (or exactly
    /// `bytes`); nil otherwise.
    func crc(upTo offset: UInt64) -> UInt32? {
        if offset == bytes { return total }
        guard let k = recent.lastIndex(where: { $0.start <= offset }) else { return offset == 0 ? 0 : nil }
        let entry = recent[k]
        guard offset - entry.start <= UInt64(entry.block.count) else { return nil }
        return CRC32.update(entry.crcBefore, UnsafeRawBufferPointer(start: entry.block.base, count: Int(offset - entry.start)))
    }
}
