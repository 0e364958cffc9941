import CZlib
import ChecklistThreads
import Glibc

/// Where a `SnapshotDecoder` gets its uncompressed bytes: one gzip stream
/// inflated as input is fed (`GzipInflater`), or a whole file inflated
/// member by member on several threads (`ParallelGzipInflater`).
protocol InflatedSource: AnyObject {
    /// Compressed bytes consumed so far.
    var totalIn: UInt64 { get }
    /// Uncompressed bytes handed out so far.
    var totalOut: UInt64 { get }
    /// Writes the next uncompressed bytes into `output` (not empty).
    func inflate(into output: UnsafeMutableRawBufferPointer,
                 fail: (SnapshotError.Code, String) -> SnapshotError) throws(SnapshotError) -> GzipInflater.Step
    /// How many of the first bytes handed out the source checksummed
    /// itself (CRC-32), so that the reader need not: 0 for a plain stream.
    var checksummedBytes: UInt64 { get }
    /// The CRC-32 of the first `offset` bytes handed out, for an `offset`
    /// up to `checksummedBytes` and no more than `maxLookBack` bytes before
    /// `totalOut` (or exactly `checksummedBytes`); nil otherwise.
    func contentCRC(upTo offset: UInt64) -> UInt32?
    /// Where every byte handed out so far was taken, offers the records
    /// a worker decoded that come next (`StretchDecoder`), if any, to
    /// `accept` (`totalIn` counts their compressed bytes already). When
    /// `accept` takes them, their bytes (`DecodedStretch.bytes`) count as
    /// handed out and their number is returned; otherwise (nothing decoded
    /// there, refused) nil, and `inflate` hands the bytes out as usual.
    func takeDecodedStretch(_ accept: (DecodedStretch) throws -> Bool) throws -> Int?
}

extension GzipInflater: InflatedSource {
    var checksummedBytes: UInt64 { 0 }
    func contentCRC(upTo offset: UInt64) -> UInt32? { offset == 0 ? 0 : nil }
}

extension InflatedSource {
    /// A source whose workers decode nothing (one stream) offers no
    /// decoded records.
    func takeDecodedStretch(_ accept: (DecodedStretch) throws -> Bool) throws -> Int? { nil }
}

/// Inflates a snapshot file written by parallel compression (one gzip
/// member per block, Protocol/SNAPSHOT.md section 2) on several threads,
/// handing the content out in order.
///
/// - The file is mapped; members are found by the fixed first bytes every
///   member this project writes starts with (`memberStart`: no name, MTIME
///   0). Each stretch from one such start to the next is inflated by a
///   worker, which must find whole members ending exactly at the stretch's
///   end: a match inside compressed data, or any damage, makes the stretch
///   fail.
/// - From the first stretch that fails on, the rest of the file is inflated
///   as one stream on the caller's thread, exactly as `GzipInflater` does
///   for any file: so damaged files give the same errors, and files of
///   other writers (one member, names, ...) are read as before.
/// - At most `ahead` stretches wait inflated, each at most `maxStretchBytes`
///   (a bigger one fails over to the stream, where the decoder's limits
///   apply as it goes): memory stays bounded.
/// - The workers also give each stretch's CRC-32 (combined from the CRCs
///   zlib takes of its members anyway), so the content checksum
///   (the trailer's) costs the reading thread nothing for those bytes
///   (`InflatedContentChecksum`).
/// - Optionally a worker also decodes the records of the stretch it
///   inflated (`decodeStretch`), and the reader may take those instead of
///   their bytes (`takeDecodedStretch`).
final class ParallelGzipInflater: InflatedSource {
    /// ID1 ID2 CM=8 FLG=0 MTIME=0: how every member `GzipDeflater` writes begins.
    static let memberStart: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00]
    /// The most one stretch may inflate to before it is left to the stream.
    static let maxStretchBytes = 32 << 20

    private let file: MappedFile
    private let stretches: [Range<Int>]
    private let pool: InflatePool?
    /// The next stretch to hand out.
    private var nextStretch = 0
    private var cursor = InflatedBlockCursor()
    private var parallelIn: UInt64 = 0
    private var parallelOut: UInt64 = 0
    /// The stream that takes over after a failed stretch (or for all of a
    /// file with one stretch), fed from `serialNext`.
    private var serial: GzipInflater?
    private var serialStart = 0
    private var serialNext = 0
    /// The CRC-32 of the stretches taken so far.
    private var checksum: InflatedContentChecksum

    /// Maps `path`; `threads` workers (1 or less reads it as one stream).
    /// `maxLookBack`: how many bytes before the last one handed out
    /// `contentCRC(upTo:)` must still answer for (the reader's window).
    /// `decodeStretch`: run by the worker on each stretch it inflated
    /// cleanly; its result is offered by `takeDecodedStretch`.
    init(path: String, threads: Int, maxLookBack: Int = 0, decodeStretch: StretchDecoder? = nil) throws(SnapshotError) {
        checksum = InflatedContentChecksum(maxLookBack: maxLookBack)
        file = try MappedFile(path: path, failure: SnapshotError.self)
        let starts = file.withBytes { Self.memberStarts(in: $0) }
        if starts.count < 2 || starts.first != 0 || threads < 2 {
            stretches = []
            pool = nil
            try startSerial(at: 0)
            return
        }
        stretches = zip(starts, starts.dropFirst() + [file.count]).map { $0..<$1 }
        pool = InflatePool(bytes: file.withBytes { SharedBytes(bytes: $0) }, stretches: stretches, threads: threads,
                           ahead: threads * 2, maxBytes: Self.maxStretchBytes, decode: decodeStretch)
    }

    deinit {
        // The workers stop and are joined before the mapping goes.
        pool?.close()
    }

    /// Workers a reader uses: one per core, at most 16.
    static var defaultThreads: Int { min(16, max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    var totalIn: UInt64 { serial.map { UInt64(serialStart) + $0.totalIn } ?? parallelIn }
    var totalOut: UInt64 { parallelOut + (serial?.totalOut ?? 0) }

    func inflate(into output: UnsafeMutableRawBufferPointer,
                 fail: (SnapshotError.Code, String) -> SnapshotError) throws(SnapshotError) -> GzipInflater.Step {
        while true {
            if let serial { return try inflateSerially(serial, into: output, fail: fail) }
            let n = cursor.copy(into: output)
            if n > 0 {
                parallelOut += UInt64(n)
                return .produced(n)
            }
            guard nextStretch < stretches.count else { return .end }
            if let block = try takeStretch() { cursor.start(block) }
        }
    }

    func takeDecodedStretch(_ accept: (DecodedStretch) throws -> Bool) throws -> Int? {
        guard serial == nil, pool != nil else { return nil }
        if cursor.isExhausted {
            guard nextStretch < stretches.count, let block = try takeStretch() else { return nil }
            cursor.start(block)
        }
        guard let n = try cursor.takeDecoded(accept) else { return nil }
        parallelOut += UInt64(n)
        return n
    }

    /// Takes the next stretch from the pool, or (it did not inflate
    /// cleanly) starts the stream there and returns nil.
    private func takeStretch() throws(SnapshotError) -> InflatedBlock? {
        guard let pool else { return nil }
        guard let block = pool.take(nextStretch) else {
            pool.close()
            try startSerial(at: stretches[nextStretch].lowerBound)
            return nil
        }
        checksum.add(block)
        parallelIn += UInt64(stretches[nextStretch].count)
        nextStretch += 1
        return block
    }

    /// Bytes of the stretches taken: every byte before the serial stream's.
    var checksummedBytes: UInt64 { checksum.bytes }

    func contentCRC(upTo offset: UInt64) -> UInt32? { checksum.crc(upTo: offset) }

    private func startSerial(at offset: Int) throws(SnapshotError) {
        serial = try GzipInflater()
        serialStart = offset
        serialNext = offset
    }

    private func inflateSerially(_ serial: GzipInflater, into output: UnsafeMutableRawBufferPointer,
                                 fail: (SnapshotError.Code, String) -> SnapshotError) throws(SnapshotError) -> GzipInflater.Step {
        while true {
            let step = try serial.inflate(into: output, fail: fail)
            guard step == .needInput else { return step }
            let fed = file.withBytes { bytes in serial.feed(UnsafeRawBufferPointer(rebasing: bytes[serialNext...])) }
            serialNext += fed
            if serialNext == file.count && fed == 0 { serial.endInput() }
        }
    }

    /// Offsets where `memberStart` occurs, ascending.
    static func memberStarts(in bytes: UnsafeRawBufferPointer) -> [Int] {
        guard let base = bytes.baseAddress else { return [] }
        var starts: [Int] = []
        var offset = 0
        memberStart.withUnsafeBytes { needle in
            while offset + needle.count <= bytes.count,
                  let hit = memchr(base + offset, Int32(needle[0]), bytes.count - offset - needle.count + 1) {
                let at = base.distance(to: UnsafeRawPointer(hit))
                if memcmp(hit, needle.baseAddress!, needle.count) == 0 { starts.append(at) }
                offset = at + 1
            }
        }
        return starts
    }
}

/// A read-only view of the mapped file for the workers. Safe to share: the
/// mapping is never written, and `ParallelGzipInflater` joins the workers
/// before it unmaps it.
struct SharedBytes: @unchecked Sendable {
    let bytes: UnsafeRawBufferPointer
}

/// Worker threads inflating stretches of a mapped file, `ahead` at most
/// before the reader takes them.
final class InflatePool: Sendable {
    struct State {
        /// Per stretch: nil while pending, then the block or a failure.
        var results: [Int: InflatedBlock?] = [:]
        var nextToStart = 0
        var nextToTake = 0
        var closed = false
    }

    private let lock: ConditionLock<State>
    private let threads: [NativeThread]

    init(bytes: SharedBytes, stretches: [Range<Int>], threads count: Int, ahead: Int, maxBytes: Int,
         decode: StretchDecoder? = nil) {
        let lock = ConditionLock(State())
        self.lock = lock
        threads = (0..<count).map { n in
            NativeThread.spawn(name: "checklist-inflate-\(n)") {
                InflatePool.work(lock: lock, bytes: bytes, stretches: stretches, ahead: ahead, maxBytes: maxBytes, decode: decode)
            }
        }
    }

    /// Waits for stretch `index` (taken in order): its content, or nil when
    /// it did not inflate cleanly.
    func take(_ index: Int) -> InflatedBlock? {
        let block = lock.withLock(waitingOn: .progress, until: { $0.results[index] != nil }) { s, _ in
            s.nextToTake = index + 1
            return s.results.removeValue(forKey: index) ?? nil
        }
        lock.broadcast(.work)
        return block
    }

    /// Stops the workers and waits for them. Later calls do nothing.
    func close() {
        let first = lock.withLock { s in
            defer { s.closed = true }
            return !s.closed
        }
        guard first else { return }
        lock.broadcast(.work)
        for thread in threads { thread.join() }
    }

    private static func work(lock: ConditionLock<State>, bytes: SharedBytes, stretches: [Range<Int>], ahead: Int, maxBytes: Int,
                             decode: StretchDecoder?) {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let ready = czlib_inflateInit2(stream, 31) == Z_OK
        defer {
            if ready { inflateEnd(stream) }
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
        while true {
            let index: Int? = lock.withLock(waitingOn: .work, until: { s in
                s.closed || s.nextToStart >= stretches.count || s.nextToStart < s.nextToTake + ahead
            }) { s, _ in
                guard !s.closed, s.nextToStart < stretches.count else { return nil }
                defer { s.nextToStart += 1 }
                return s.nextToStart
            }
            guard let index else { return }
            let block = ready ? inflate(stretches[index], of: bytes.bytes, stream: stream, maxBytes: maxBytes) : nil
            if let block, let decode { block.decode(from: 0, with: decode) }
            lock.withLock { $0.results[index] = .some(block) }
            lock.broadcast(.progress)
        }
    }

    /// Inflates the members in `stretch`; nil unless they are whole, end
    /// exactly at its end and fit `maxBytes`.
    private static func inflate(_ stretch: Range<Int>, of bytes: UnsafeRawBufferPointer, stream: UnsafeMutablePointer<z_stream>,
                                maxBytes: Int) -> InflatedBlock? {
        let block = InflatedBlock(capacity: stretch.count * 4)
        let step = 256 << 10
        var position = stretch.lowerBound
        var memberStart = 0
        inflateReset(stream)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
            stream.pointee.next_out = nil
            stream.pointee.avail_out = 0
        }
        while true {
            guard block.reserve(step, limit: maxBytes) || block.reserve(1, limit: maxBytes) else { return nil }
            let free = block.free
            let available = min(stretch.upperBound - position, Int(UInt32.max))
            stream.pointee.next_in = UnsafeMutablePointer(mutating: (bytes.baseAddress! + position).assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(available)
            stream.pointee.next_out = free.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(min(free.count, Int(UInt32.max)))
            let rc = CZlib.inflate(stream, Z_NO_FLUSH)
            let consumed = available - Int(stream.pointee.avail_in)
            let produced = min(free.count, Int(UInt32.max)) - Int(stream.pointee.avail_out)
            position += consumed
            block.added(produced)
            switch rc {
            case Z_STREAM_END:
                // For a gzip stream, `adler` is the member's CRC-32.
                block.appendCRC(UInt32(truncatingIfNeeded: stream.pointee.adler), bytes: block.count - memberStart)
                memberStart = block.count
                if position == stretch.upperBound {
                    block.finish()
                    return block
                }
                inflateReset(stream)
            case Z_OK, Z_BUF_ERROR:
                // No progress: the stretch ends inside a member.
                if consumed == 0 && produced == 0 { return nil }
            default:
                return nil
            }
        }
    }
}
