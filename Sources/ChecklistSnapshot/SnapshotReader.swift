import ChecklistModel
import Glibc

/// Reads a snapshot with a pull API: the header on opening, then one list or
/// item per `next()`, in file order, until `nil` after the trailer was
/// checked. Memory stays bounded (see `SnapshotDecoder`) however many items
/// the snapshot holds.
///
/// Errors name the file and the uncompressed offset: `CORRUPT_SNAPSHOT`,
/// `TRUNCATED_SNAPSHOT`, `SNAPSHOT_CHECKSUM`, `DECOMPRESSION_LIMIT`,
/// `RECORD_TOO_LARGE`, `UNSUPPORTED_VERSION`, `IO`.
public final class SnapshotReader {
    /// The snapshot's HEADER record, read when the reader was created.
    public let header: SnapshotHeader
    /// Set once `next()` returned nil: the verified trailer.
    public private(set) var trailer: SnapshotTrailer?
    private let decoder: SnapshotDecoder
    private let input: (UnsafeMutableRawBufferPointer) throws(SnapshotError) -> Int
    private let file: FileInput?

    /// Opens the snapshot file at `path` and reads its header. A file of
    /// parallel-compressed members is inflated by `inflateThreads` threads
    /// (`ParallelGzipInflater`; 1 reads it as one stream on this thread).
    ///
    /// With `rowBuilding` (a sink's, `SnapshotRestoreSink.rowBuilding`)
    /// those threads also decode the records of what they inflated and
    /// build the rows, which `readAll(into:)` then hands to the sink's
    /// `restoreRows` a stretch at a time.
    public convenience init(path: String, limits: SnapshotLimits = .default,
                            inflateThreads: Int = SnapshotReader.defaultInflateThreads,
                            rowBuilding: SnapshotRowBuilding? = nil) throws(SnapshotError) {
        let source = try ParallelGzipInflater(path: path, threads: inflateThreads, maxLookBack: SnapshotDecoder.windowBytes(limits),
                                              decodeStretch: rowBuilding?.decoder(limits: limits))
        try self.init(decoder: SnapshotDecoder(name: path, limits: limits, source: source), file: nil) { _ throws(SnapshotError) in 0 }
    }

    /// Threads that inflate a snapshot file: one per core, at most 16.
    public static var defaultInflateThreads: Int { ParallelGzipInflater.defaultThreads }

    /// Reads a snapshot from `input`, which fills the buffer it is given and
    /// returns the byte count (0 at the end). `name` names it in errors.
    public convenience init(name: String, limits: SnapshotLimits = .default,
                            input: @escaping (UnsafeMutableRawBufferPointer) throws(SnapshotError) -> Int) throws(SnapshotError) {
        try self.init(name: name, limits: limits, file: nil, input: input)
    }

    private convenience init(name: String, limits: SnapshotLimits, file: FileInput?,
                             input: @escaping (UnsafeMutableRawBufferPointer) throws(SnapshotError) -> Int) throws(SnapshotError) {
        try self.init(decoder: SnapshotDecoder(name: name, limits: limits), file: file, input: input)
    }

    private init(decoder: SnapshotDecoder, file: FileInput?,
                 input: @escaping (UnsafeMutableRawBufferPointer) throws(SnapshotError) -> Int) throws(SnapshotError) {
        self.file = file
        self.input = input
        self.decoder = decoder
        while true {
            switch try decoder.next() {
            case .header(let header):
                self.header = header
                return
            case .needInput:
                try decoder.fillInput(input)
            default:
                throw SnapshotError(.corruptSnapshot, "snapshot has no header", file: decoder.name, offset: 0)
            }
        }
    }

    /// The next list, item or extension record this reader knows, or nil
    /// after the trailer was read and checked.
    public func next() throws(SnapshotError) -> SnapshotRecord? {
        while true {
            switch try decoder.next() {
            case .list(let list): return .list(list)
            case .item(let item): return .item(item)
            case .idempotency(let client): return .idempotency(client)
            case .end(let trailer):
                self.trailer = trailer
                return nil
            case .needInput:
                try decoder.fillInput(input)
            case .header:
                throw SnapshotError(.corruptSnapshot, "a second header", file: decoder.name, offset: decoder.rawOffset)
            }
        }
    }

    /// Hands the header and every remaining record to `sink`, in file order,
    /// and returns the verified trailer. Rows built on the workers (a
    /// reader made with `rowBuilding`) go to `restoreRows`, the others to
    /// `restoreItem`, in the same order.
    public func readAll(into sink: some SnapshotRestoreSink) throws -> SnapshotTrailer {
        try sink.restoreHeader(header)
        while true {
            if let trailer = try decoder.restore(into: sink) {
                self.trailer = trailer
                return trailer
            }
            try decoder.fillInput(input)
        }
    }

    /// Compressed bytes read so far (for progress).
    public var compressedOffset: UInt64 { decoder.compressedOffset }
    /// Uncompressed bytes decoded so far (for progress).
    public var rawOffset: UInt64 { decoder.rawOffset }
}

/// A file read by a snapshot reader; closed when the reader goes.
final class FileInput {
    let path: String
    private let fd: Int32

    init(path: String) throws(SnapshotError) {
        self.path = path
        fd = try POSIXFile<SnapshotError>.open(path, O_RDONLY)
    }

    func read(_ buffer: UnsafeMutableRawBufferPointer) throws(SnapshotError) -> Int {
        try POSIXFile<SnapshotError>.read(fd, into: buffer, path: path)
    }

    deinit { Glibc.close(fd) }
}
