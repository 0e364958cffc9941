import ChecklistModel
import ChecklistWire
import Glibc

/// Writes a snapshot (Protocol/SNAPSHOT.md) as a stream: records are encoded
/// into a fixed-size block, each full block is checksummed and compressed,
/// and compressed chunks go to `output` as they are produced. Memory stays
/// bounded whatever the number of items.
///
/// Call `writeList` then exactly `itemCount` `writeItem`s per list, lists in
/// ascending id order, then (a server's own snapshot) `writeIdempotency` for
/// each client of its memory of keys, then `finish`. Not thread-safe: one
/// thread writes.
public final class SnapshotWriter {
    /// How to compress.
    public struct Options: Sendable {
        /// zlib level 1 (fastest, the default) to 9 (smallest).
        public var level: Int32
        /// Uncompressed bytes collected before they are compressed.
        public var blockBytes: Int
        /// 1: one gzip member compressed on the writing thread. 2 or more:
        /// blocks are compressed by that many threads as independent gzip
        /// members, concatenated in order (still one valid gzip file). On
        /// two cores, 2 threads wrote 1M items about 1.75x faster at level 1
        /// and 1.9x at level 6, for 0.1% more bytes (Protocol/SNAPSHOT.md
        /// section 9); pass 1 to leave a core to request handling.
        public var compressionThreads: Int

        public init(level: Int32 = 1, blockBytes: Int = 1 << 20, compressionThreads: Int = 2) {
            self.level = level
            self.blockBytes = blockBytes
            self.compressionThreads = compressionThreads
        }
    }

    /// What was written.
    public struct Summary: Hashable, Sendable {
        public var header: SnapshotHeader
        public var trailer: SnapshotTrailer
        /// Uncompressed bytes, trailer included.
        public var rawBytes: UInt64
        /// Bytes handed to the output.
        public var compressedBytes: UInt64
    }

    public let header: SnapshotHeader
    public let options: Options
    private let compressor: BlockCompressor
    private var staging: WireWriter
    private var crc: UInt32 = 0
    private var contentBytes: UInt64 = 0
    private var lists: UInt64 = 0
    private var items: UInt64 = 0
    private var itemsLeft: UInt64 = 0
    private var lastList: SnapshotList?
    private var finished = false
    private let file: FileOutput?

    /// Starts a snapshot whose compressed bytes go to `output`, in chunks of
    /// at most 64 KiB, on the calling thread.
    public init(header: SnapshotHeader, options: Options = Options(),
                output: @escaping (UnsafeRawBufferPointer) throws(SnapshotError) -> Void) throws(SnapshotError) {
        self.header = header
        self.options = options
        self.file = nil
        staging = WireWriter(capacity: options.blockBytes + 64 * 1024)
        compressor = try BlockCompressor(level: options.level, threads: options.compressionThreads,
                                         blockBytes: options.blockBytes, output: output)
        try start()
    }

    /// Starts a snapshot written to a new file at `path` (replacing one that
    /// exists). `finish` fsyncs and closes it.
    public init(path: String, header: SnapshotHeader, options: Options = Options()) throws(SnapshotError) {
        let file = try FileOutput(path: path)
        self.header = header
        self.options = options
        self.file = file
        staging = WireWriter(capacity: options.blockBytes + 64 * 1024)
        compressor = try BlockCompressor(level: options.level, threads: options.compressionThreads,
                                         blockBytes: options.blockBytes, output: file.write)
        try start()
    }

    private func start() throws(SnapshotError) {
        staging.bytes.append(contentsOf: SnapshotFormat.magic)
        staging.writeU8(UInt8(SnapshotFormat.version >> 8))
        staging.writeU8(UInt8(SnapshotFormat.version & 0xFF))
        record(.header) { header.encode(into: &$0) }
    }

    /// Uncompressed bytes written so far (for progress).
    public var rawBytes: UInt64 { contentBytes + UInt64(staging.count) }

    /// Compressed bytes handed to the output so far (for progress).
    public var compressedBytes: UInt64 { compressor.compressedBytes }

    /// Writes a list; exactly `list.itemCount` items must follow.
    public func writeList(_ list: SnapshotList) throws(SnapshotError) {
        try check(itemsLeft == 0, "list \(lastList?.id.rawValue ?? 0) announced more items than were written")
        if let lastList { try check(list.id > lastList.id, "list \(list.id) written after list \(lastList.id): ids must ascend") }
        record(.list) { list.encode(into: &$0) }
        lastList = list
        itemsLeft = list.itemCount
        lists += 1
        try flushIfFull()
    }

    /// Writes the next item of the current list.
    public func writeItem(_ item: Item) throws(SnapshotError) {
        let fields = item.fields
        try fields.text.withWireUTF8 { text in
            Result { () throws(SnapshotError) in
                try writeItem(id: item.id, checked: fields.checked, remind: fields.remind, due: fields.due,
                              price: fields.price, clientKey: fields.clientKey, text: text)
            }
        }.get()
    }

    /// Writes the next item of the current list, its text the UTF-8 bytes
    /// `text` (copied), so a store can hand its text storage over as it is.
    /// A `clientKey` sets **ItemFields** bit 4 (Protocol/SNAPSHOT.md section
    /// 3.5). The record is sized first and written in one pass.
    public func writeItem(id: ItemID, checked: Bool, remind: Bool, due: Int64?, price: Int64?, clientKey: String? = nil,
                          text: UnsafeRawBufferPointer) throws(SnapshotError) {
        try check(itemsLeft > 0, "item \(id) is more than the current list announced")
        let body = WireSize.varint(id.rawValue)
            + ItemFields.encodedBytes(due: due, price: price, clientKey: clientKey, textBytes: text.count)
        staging.writeReserved(count: 1 + WireSize.varint(UInt64(body)) + body) { c in
            c.writeU8(SnapshotRecordType.item.rawValue)
            c.writeVarint(UInt64(body))
            c.writeVarint(id.rawValue)
            ItemFields.write(checked: checked, remind: remind, due: due, price: price, clientKey: clientKey, text: text, into: &c)
        }
        itemsLeft -= 1
        items += 1
        try flushIfFull()
    }

    /// Body bytes past which `writeIdempotency` starts a client's next
    /// record, so that records stay far below readers' record limit (1 MiB).
    public static let idempotencyRecordBytes = 64 * 1024

    /// Writes one client's remembered idempotency keys as IDEMPOTENCY
    /// records (Protocol/SNAPSHOT.md section 3.8): one record, or several in
    /// a row when its answers take more than `idempotencyRecordBytes`. A
    /// client without answers still gets a record (its floor). Not inside a
    /// list's items; the server writes them after the last list.
    public func writeIdempotency(_ client: SnapshotIdempotency) throws(SnapshotError) {
        try check(itemsLeft == 0, "idempotency record while list \(lastList?.id.rawValue ?? 0) misses \(itemsLeft) items")
        var head = WireWriter(capacity: 64)
        client.encodeHead(into: &head)
        var batch = WireWriter(capacity: 1024)
        var batchCount = 0
        var next = 0
        repeat {
            // Take answers until the next one would pass the bound (at least one).
            batch.reset()
            batchCount = 0
            while next < client.answers.count {
                let before = batch.count
                SnapshotIdempotency.encode(client.answers[next], into: &batch)
                // Head, the count (a varint of at most 10 bytes), the answers.
                if batchCount > 0 && head.count + 10 + batch.count > Self.idempotencyRecordBytes {
                    batch.bytes.removeSubrange(before...)
                    break
                }
                batchCount += 1
                next += 1
            }
            record(.idempotency) { w in
                w.bytes.append(contentsOf: head.bytes)
                w.writeVarint(batchCount)
                w.bytes.append(contentsOf: batch.bytes)
            }
            try flushIfFull()
        } while next < client.answers.count
    }

    /// Writes the trailer, ends the gzip stream and, for a file, fsyncs and
    /// closes it. `endLSN` is the log's last LSN now (0 without a log).
    @discardableResult
    public func finish(endLSN: LSN) throws(SnapshotError) -> Summary {
        try check(itemsLeft == 0, "list \(lastList?.id.rawValue ?? 0) announced \(itemsLeft) more items than were written")
        crc = staging.bytes.withUnsafeBytes { CRC32.update(crc, $0) }
        let trailer = SnapshotTrailer(listCount: lists, itemCount: items, endLSN: endLSN,
                                      contentBytes: contentBytes + UInt64(staging.count), crc32: crc)
        record(.trailer) { trailer.encode(into: &$0) }
        let raw = contentBytes + UInt64(staging.count)
        finished = true
        try compressor.compress(staging.bytes, last: true)
        staging.reset()
        try file?.finish()
        return Summary(header: header, trailer: trailer, rawBytes: raw, compressedBytes: compressor.compressedBytes)
    }

    private func check(_ ok: Bool, _ message: @autoclosure () -> String) throws(SnapshotError) {
        if finished { throw SnapshotError(.misuse, "snapshot already finished") }
        if !ok { throw SnapshotError(.misuse, message()) }
    }

    /// Appends `type`, the body's varint length and the body. The length is
    /// guessed to take one byte and moved when it takes more.
    @inline(__always)
    private func record(_ type: SnapshotRecordType, _ body: (inout WireWriter) -> Void) {
        staging.writeU8(type.rawValue)
        let lengthAt = staging.count
        staging.writeU8(0)
        body(&staging)
        let length = staging.count - lengthAt - 1
        if length < 0x80 {
            staging.bytes[lengthAt] = UInt8(length)
        } else {
            var varint = WireWriter(capacity: 10)
            varint.writeVarint(length)
            staging.bytes.replaceSubrange(lengthAt...lengthAt, with: varint.bytes)
        }
    }

    private func flushIfFull() throws(SnapshotError) {
        guard staging.count >= options.blockBytes else { return }
        crc = staging.bytes.withUnsafeBytes { CRC32.update(crc, $0) }
        contentBytes += UInt64(staging.count)
        try compressor.compress(staging.bytes, last: false)
        staging.reset()
    }
}

/// A file a snapshot is written to: created (or truncated), written, then
/// fsynced and closed by `finish`; closed without fsync if abandoned.
final class FileOutput {
    let path: String
    private var fd: Int32

    init(path: String) throws(SnapshotError) {
        self.path = path
        fd = try POSIXFile<SnapshotError>.open(path, O_WRONLY | O_CREAT | O_TRUNC)
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(SnapshotError) {
        try POSIXFile<SnapshotError>.writeAll(fd, bytes, path: path)
    }

    func finish() throws(SnapshotError) {
        defer { Glibc.close(fd); fd = -1 }
        try POSIXFile<SnapshotError>.fsync(fd, path: path)
    }

    deinit {
        if fd >= 0 { Glibc.close(fd) }
    }
}
