/// Inflates a snapshot that arrives in chunks (the DATA chunks of an
/// IMPORT), its gzip members on several threads (`InflateWorkers`), handing
/// the content out in order, with exactly the content and errors of
/// `GzipInflater` fed the same bytes.
///
/// - Each chunk is cut into pieces where a member seems to start (the fixed
///   first bytes every member `GzipDeflater` writes starts with,
///   `ParallelGzipInflater.memberStart`), at most one cut per
///   `minPieceBytes`. The first piece continues the member the last chunk
///   left open, on that chunk's last stream; every later piece is a guess
///   that a member starts at its first byte, inflated on a fresh stream.
/// - Pieces are taken in order. A guessed piece counts only when the piece
///   before it ended a member exactly at its last byte (the guess was
///   right); otherwise it and the rest of the chunk's guesses are dropped,
///   and the rest of the chunk continues the stream before it. So a piece
///   that counts inflated what one stream over all the bytes would have,
///   and an error it met is the error that stream meets there.
/// - A piece inflates to at most `maxPieceBytes` (4 MiB); a bigger one is taken
///   that far and the rest of the chunk goes on from there on its stream
///   (the decoder's size and ratio bounds apply as the content comes).
///   At most `ahead` pieces (the workers' count + 1, at most 8) are given
///   to the workers before the reader takes them: memory stays bounded (at
///   most `(ahead + 1) * maxPieceBytes`, 36 MiB, beyond the chunk).
/// - The whole chunk is inflated before the decoder asks for more input:
///   every DATA answer reports what its bytes let the server find, as with
///   one stream.
/// - Each piece's CRC-32 comes from the ones zlib keeps of its members
///   (`InflateStream.run`), so the reader checksums no content itself
///   (`InflatedContentChecksum`).
/// - With a `decoder` (a sink's `SnapshotRowBuilding`), a worker also
///   decodes the records of its piece from where one starts: a piece that
///   starts a member (this project's writer ends its blocks after a whole
///   record), or the chunk's first piece past the rest of the record the
///   last chunk left open (`recordBoundary`, asked when the chunk comes).
///   The reader takes those records whole where its window is empty there
///   (`takeDecodedStretch`, checked by `SnapshotDecoder`), else reads
///   their bytes as usual.
///
/// Used by one thread at a time (the import's), feeding chunks with `feed`
/// when the decoder says `.needInput`.
public final class ParallelStreamInflater: InflatedSource {
    /// The most one piece inflates to by default before the rest of its
    /// chunk continues from where it stopped.
    static let defaultMaxPieceBytes = 4 << 20
    /// The least compressed bytes between two cuts of a chunk.
    static let minPieceBytes = 64 << 10

    private let workers: InflateWorkers?
    private let ahead: Int
    /// The most one piece inflates to.
    let maxPieceBytes: Int
    /// The stream of the last piece taken: the next piece that continues
    /// a member goes on on it.
    private var carry = InflateStream()
    /// The chunk being inflated, where its pieces start, and how far they
    /// were made and taken.
    private var chunk: [UInt8] = []
    private var cuts: [Int] = []
    private var pieces: [InflatePiece] = []
    private var taken = 0
    private var cursor = InflatedBlockCursor()
    private var checksum: InflatedContentChecksum
    private let decoder: StretchDecoder?
    /// Where the first record starts in the content of the next chunk fed
    /// (`SnapshotDecoder.bytesToRecordBoundary`), nil if not known.
    var recordBoundary: (() -> Int?)?
    /// Where the first piece of the chunk being inflated decodes from.
    private var firstDecodeFrom: Int?
    /// The error met by the last piece taken, reported once its content
    /// was handed out.
    private var failure: (code: SnapshotError.Code, message: String)?
    private var inputEnded = false
    private var sawInput = false
    private(set) var totalIn: UInt64 = 0
    private(set) var totalOut: UInt64 = 0

    /// A stream whose members `workers` inflate (nil: all on the reader's
    /// thread, one piece per chunk). `maxLookBack`: how many bytes before
    /// the last one handed out `contentCRC(upTo:)` must still answer for
    /// (the decoder's window). `decoder`: decodes the records of each piece
    /// on the worker inflating it.
    init(workers: InflateWorkers?, maxPieceBytes: Int = ParallelStreamInflater.defaultMaxPieceBytes,
         maxLookBack: Int, decoder: StretchDecoder? = nil) {
        self.workers = workers
        self.maxPieceBytes = maxPieceBytes
        self.decoder = decoder
        checksum = InflatedContentChecksum(maxLookBack: maxLookBack)
        // At most 8 pieces ahead: at most 9 pieces' content held per stream.
        ahead = min(8, (workers?.threadCount ?? 0) + 1)
    }

    deinit {
        for piece in pieces[taken...] { piece.cancel() }
    }

    /// Gives the next chunk of compressed bytes; only once the decoder asked
    /// for input (every piece of the last chunk was taken).
    public func feed(_ bytes: [UInt8]) {
        precondition(taken == pieces.count && cursor.isExhausted, "ParallelStreamInflater: fed before the last chunk was inflated")
        guard !bytes.isEmpty else { return }
        sawInput = true
        firstDecodeFrom = decoder == nil ? nil : recordBoundary?()
        chunk = bytes
        cuts = workers == nil ? [0] : Self.cuts(in: bytes)
        pieces = []
        taken = 0
        start(at: 0)
    }

    /// Says that no more input will come.
    public func endInput() { inputEnded = true }

    var checksummedBytes: UInt64 { checksum.bytes }
    func contentCRC(upTo offset: UInt64) -> UInt32? { checksum.crc(upTo: offset) }

    func inflate(into output: UnsafeMutableRawBufferPointer,
                 fail: (SnapshotError.Code, String) -> SnapshotError) throws(SnapshotError) -> GzipInflater.Step {
        while true {
            let n = cursor.copy(into: output)
            if n > 0 {
                totalOut += UInt64(n)
                return .produced(n)
            }
            if let failure {
                throw failure.code == .io ? SnapshotError(.io, failure.message) : fail(failure.code, failure.message)
            }
            guard taken < pieces.count else {
                guard inputEnded else { return .needInput }
                if !sawInput { throw fail(.truncatedSnapshot, "file is empty") }
                if carry.memberOpen { throw fail(.truncatedSnapshot, "gzip stream ends early (truncated)") }
                return .end
            }
            takePiece()
        }
    }

    func takeDecodedStretch(_ accept: (DecodedStretch) throws -> Bool) throws -> Int? {
        if cursor.isExhausted {
            guard failure == nil, taken < pieces.count else { return nil }
            takePiece()
        }
        guard let n = try cursor.takeDecoded(accept) else { return nil }
        totalOut += UInt64(n)
        return n
    }

    /// Takes the next piece's content, or drops the guesses from it on.
    private func takePiece() {
        let piece = pieces[taken]
        if !piece.continues && carry.memberOpen {
            // The member before did not end where this piece starts: the
            // rest of the chunk continues it.
            restart(at: piece.range.lowerBound)
            return
        }
        taken += 1
        start(at: taken)
        let outcome = piece.outcome()
        carry = piece.stream
        totalIn += UInt64(outcome.consumed)
        cursor.start(outcome.block)
        checksum.add(outcome.block)
        if let error = outcome.failure {
            failure = error
            dropPieces(from: taken)
        } else if outcome.consumed < piece.range.count {
            restart(at: piece.range.lowerBound + outcome.consumed)
        }
    }

    /// Makes and hands to the workers the pieces up to `ahead` past the
    /// next one to take.
    private func start(at next: Int) {
        let end = min(cuts.count, next + ahead)
        while pieces.count < end {
            let k = pieces.count
            let range = cuts[k]..<(k + 1 < cuts.count ? cuts[k + 1] : chunk.count)
            // The first piece goes on on the last chunk's stream (a member
            // that ended there makes it start the next one, as one stream does).
            // Every later piece is a guess that a member, and so a record,
            // starts there.
            let continues = k == 0
            let piece = InflatePiece(bytes: chunk, range: range, stream: continues ? carry : InflateStream(),
                                     continues: continues, cap: maxPieceBytes,
                                     decoder: decoder, decodeFrom: continues ? firstDecodeFrom : 0)
            pieces.append(piece)
            if let workers, cuts.count > 1 { workers.submit(piece) }
        }
    }

    /// The rest of the chunk from `offset` becomes one piece continuing
    /// the stream of the last piece taken.
    private func restart(at offset: Int) {
        dropPieces(from: taken)
        cuts = Array(cuts[..<taken]) + [offset]
        pieces.append(InflatePiece(bytes: chunk, range: offset..<chunk.count, stream: carry, continues: true,
                                   cap: maxPieceBytes))
    }

    private func dropPieces(from index: Int) {
        for piece in pieces[index...] { piece.cancel() }
        pieces.removeSubrange(index...)
        cuts.removeSubrange(min(index, cuts.count)...)
    }

    /// Where the pieces of `bytes` start: 0, then member starts at least
    /// `minPieceBytes` apart.
    static func cuts(in bytes: [UInt8]) -> [Int] {
        var cuts = [0]
        let starts = bytes.withUnsafeBytes { ParallelGzipInflater.memberStarts(in: $0) }
        for start in starts where start - cuts[cuts.count - 1] >= minPieceBytes {
            cuts.append(start)
        }
        return cuts
    }
}
