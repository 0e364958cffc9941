import ChecklistModel
import ChecklistWire

/// Limits a snapshot reader enforces, so that a small hostile file cannot
/// make it inflate gigabytes or allocate a huge record.
public struct SnapshotLimits: Hashable, Sendable {
    /// Largest record body accepted (and the size of the record window).
    public var maxRecordBytes: Int
    /// Most uncompressed bytes a snapshot may inflate to.
    public var maxRawBytes: UInt64
    /// Most uncompressed bytes per compressed byte, checked once more than
    /// `ratioGraceBytes` were inflated (small snapshots compress unevenly).
    public var maxRatio: UInt64
    /// Uncompressed bytes inflated before `maxRatio` is enforced.
    public var ratioGraceBytes: UInt64

    public init(maxRecordBytes: Int = 1 << 20, maxRawBytes: UInt64 = 16 << 30,
                maxRatio: UInt64 = 200, ratioGraceBytes: UInt64 = 64 << 20) {
        self.maxRecordBytes = maxRecordBytes
        self.maxRawBytes = maxRawBytes
        self.maxRatio = maxRatio
        self.ratioGraceBytes = ratioGraceBytes
    }

    public static let `default` = SnapshotLimits()
}

/// Decodes a snapshot pushed to it in compressed chunks of any size: the
/// bytes of a file, or of EXPORT chunks arriving from the network. Only a
/// fixed input buffer and a window of one record plus one inflated chunk
/// are held, whatever the snapshot's size.
///
/// Loop on `next()`: on `.needInput`, `feed` more bytes (or `endInput()`).
public final class SnapshotDecoder {
    /// What `next()` found.
    public enum Event: Hashable, Sendable {
        case header(SnapshotHeader)
        case list(SnapshotList)
        case item(Item)
        /// An IDEMPOTENCY record (section 3.8); anywhere between the header
        /// and the trailer, like every extension record.
        case idempotency(SnapshotIdempotency)
        /// Feed more compressed bytes, or call `endInput()`.
        case needInput
        /// The trailer matched and the stream ended cleanly.
        case end(SnapshotTrailer)
    }

    enum Phase { case preamble, header, records, afterTrailer, finished }

    /// Names the snapshot in errors (a file path, or e.g. "IMPORT stream").
    public let name: String
    /// The bounds this decoder enforces.
    public let limits: SnapshotLimits
    /// The stream fed by `feed`/`fillInput`; nil when `source` reads a file itself.
    private let inflater: GzipInflater?
    private let source: any InflatedSource
    private let window: UnsafeMutableRawBufferPointer
    private static let inflateChunk = 64 * 1024
    private var start = 0
    private var end = 0
    /// Uncompressed offset of `window[0]`.
    private var windowOffset: UInt64 = 0
    /// CRC-32 of the first `crcOffset` uncompressed bytes, those the source
    /// did not checksum itself (`InflatedSource.checksummedBytes`).
    private var crc: UInt32 = 0
    private var crcOffset: UInt64 = 0
    private var phase = Phase.preamble
    private var itemsLeft: UInt64 = 0
    private var lists: UInt64 = 0
    private var items: UInt64 = 0
    private var trailer: SnapshotTrailer?

    /// A decoder for the snapshot called `name` in errors.
    public init(name: String, limits: SnapshotLimits = .default) throws(SnapshotError) {
        self.name = name
        self.limits = limits
        let inflater = try GzipInflater()
        self.inflater = inflater
        source = inflater
        window = .allocate(byteCount: Self.windowBytes(limits), alignment: 16)
    }

    /// The size of the window: the bytes handed out that are not consumed
    /// yet are at most this many.
    static func windowBytes(_ limits: SnapshotLimits) -> Int { limits.maxRecordBytes + 16 + inflateChunk }

    /// A decoder reading from `source` (which needs no input fed).
    init(name: String, limits: SnapshotLimits, source: any InflatedSource) {
        self.name = name
        self.limits = limits
        inflater = nil
        self.source = source
        window = .allocate(byteCount: Self.windowBytes(limits), alignment: 16)
    }

    deinit { window.deallocate() }

    /// Compressed bytes consumed so far.
    public var compressedOffset: UInt64 { source.totalIn }
    /// Uncompressed bytes decoded so far.
    public var rawOffset: UInt64 { windowOffset + UInt64(start) }

    /// Takes as much of `bytes` as fits in the input buffer; returns the count.
    public func feed(_ bytes: UnsafeRawBufferPointer) -> Int { inflater?.feed(bytes) ?? 0 }

    /// Lets `fill` read straight into the input buffer (returns bytes read,
    /// 0 at the end of the input).
    public func fillInput(_ fill: (UnsafeMutableRawBufferPointer) throws(SnapshotError) -> Int) throws(SnapshotError) {
        try inflater?.fillInput(fill)
    }

    /// Says that the input is complete.
    public func endInput() { inflater?.endInput() }

    /// Hands one ITEM record to a caller of `next(lendingItems:)`.
    typealias ItemHandler = (ImportedItems.View) throws(SnapshotError) -> Void

    /// Hands the records of a stretch the source's workers decoded
    /// (`DecodedStretch`) to a caller of `next(lendingItems:takingStretches:)`.
    typealias StretchHandler = (DecodedStretch) throws(SnapshotError) -> Void

    /// The list the last LIST record named: the one items belong to.
    private(set) var currentList: ListID?

    /// How many of the next uncompressed bytes complete the record the
    /// window holds the start of (0 when the window is empty between two
    /// records), or nil when that is not known (the record's length is not
    /// in yet, or the records have not begun): where the next content's
    /// first record starts.
    var bytesToRecordBoundary: Int? {
        guard phase == .records else { return nil }
        let available = end - start
        if available == 0 { return 0 }
        guard available >= 2 else { return nil }
        var r = WireReader(UnsafeRawBufferPointer(rebasing: window[(start + 1)..<end]))
        guard let length = try? r.readVarint("length"), length <= UInt64(limits.maxRecordBytes) else { return nil }
        let total = 1 + r.index + Int(length)
        return total > available ? total - available : nil
    }

    /// Decodes the next record, or says what is needed.
    public func next() throws(SnapshotError) -> Event {
        // Without a stretch handler `step` always has an event.
        try step(items: nil, stretches: nil)!
    }

    /// Like `next()`, but hands every ITEM record to `item` instead of
    /// returning it, as a view into the decoder's window (valid during the
    /// call only): no `String` or `Item` is made per row. Returns the next
    /// event that is not an item. Errors thrown by `item` come out as they
    /// are; the decoder's own are `SnapshotError`s.
    public func next(lendingItems item: (ImportedItems.View) throws -> Void) throws -> Event {
        // Without a stretch handler `step` always has an event.
        try next(lendingItems: item, takingStretches: nil)!
    }

    /// Like `next(lendingItems:)`, and where the window is empty at the
    /// start of a stretch the source's workers decoded, hands that stretch
    /// to `stretch` whole (after checking that its lists and items may
    /// come there, and that it stays within the limits: else its bytes
    /// are read as usual). Returns nil after one or more stretches were
    /// taken (call again).
    func next(lendingItems item: (ImportedItems.View) throws -> Void,
              takingStretches stretch: ((DecodedStretch) throws -> Void)?) throws -> Event? {
        var failure: (any Error)?
        let handler: (ImportedItems.View) throws(SnapshotError) -> Void = { view throws(SnapshotError) in
            do { try item(view) } catch {
                failure = error
                throw SnapshotError(.misuse, "stopped by the item handler")
            }
        }
        let stretches: StretchHandler = { decoded throws(SnapshotError) in
            guard let stretch else { return }
            do { try stretch(decoded) } catch {
                failure = error
                throw SnapshotError(.misuse, "stopped by the stretch handler")
            }
        }
        do {
            // `step` does not keep the handlers past the call.
            return try withoutActuallyEscaping(handler) { handler in
                try withoutActuallyEscaping(stretches) { stretches in
                    try step(items: handler, stretches: stretch == nil ? nil : stretches)
                }
            }
        } catch {
            throw failure ?? error
        }
    }

    private func step(items: ItemHandler?, stretches: StretchHandler?) throws(SnapshotError) -> Event? {
        while true {
            if phase == .finished, let trailer { return .end(trailer) }
            if let event = try parse(items: items) { return event }
            if let stretches, start == end, phase == .records, try takeStretches(stretches) { return nil }
            // Need more uncompressed bytes.
            if window.count - end < Self.inflateChunk { compact() }
            let space = UnsafeMutableRawBufferPointer(rebasing: window[end..<min(window.count, end + Self.inflateChunk)])
            let step = try source.inflate(into: space) { code, message in error(code, message, at: windowOffset + UInt64(end)) }
            switch step {
            case .produced(let n):
                end += n
                try checkBounds()
            case .needInput:
                return .needInput
            case .end:
                guard phase == .afterTrailer else {
                    throw error(.truncatedSnapshot, "snapshot ends before its trailer", at: windowOffset + UInt64(end))
                }
                phase = .finished
            }
        }
    }

    /// Takes the decoded stretches that follow (the window is empty);
    /// whether it took any.
    private func takeStretches(_ handler: StretchHandler) throws(SnapshotError) -> Bool {
        compact()
        var took = false
        do {
            while let n = try source.takeDecodedStretch({ (stretch) throws(SnapshotError) in
                guard admits(stretch, bytes: stretch.bytes) else { return false }
                try handler(stretch)
                for segment in stretch.segments {
                    if let list = segment.list {
                        currentList = list.id
                        itemsLeft = list.itemCount
                        lists += 1
                    }
                    itemsLeft -= segment.items
                    items += segment.items
                }
                return true
            }) {
                windowOffset += UInt64(n)
                took = true
            }
        } catch let error as SnapshotError {
            throw error
        } catch {
            throw SnapshotError(.misuse, "\(error)", file: name)
        }
        return took
    }

    /// Whether `stretch` may come next: every list where a LIST record may
    /// be, in ascending id order, every item within its list's count, and
    /// the content within the limits (checked as `checkBounds` would have
    /// after each of its bytes: the ratio only grows within a stretch,
    /// whose compressed bytes `totalIn` counts already).
    private func admits(_ stretch: DecodedStretch, bytes: Int) -> Bool {
        let out = source.totalOut + UInt64(bytes)
        if out > limits.maxRawBytes { return false }
        if out > limits.ratioGraceBytes && out / max(source.totalIn, 1) > limits.maxRatio { return false }
        var left = itemsLeft
        var last = currentList
        for segment in stretch.segments {
            if let list = segment.list {
                guard left == 0, last.map({ list.id > $0 }) ?? true else { return false }
                last = list.id
                left = list.itemCount
            }
            guard segment.items <= left else { return false }
            left -= segment.items
        }
        return true
    }

    private func error(_ code: SnapshotError.Code, _ message: String, at offset: UInt64) -> SnapshotError {
        SnapshotError(code, "\(message) (uncompressed offset \(offset), compressed offset \(source.totalIn))",
                         file: name, offset: offset)
    }

    private func checkBounds() throws(SnapshotError) {
        let out = source.totalOut
        if out > limits.maxRawBytes {
            throw error(.decompressionLimit, "inflates past the limit of \(limits.maxRawBytes) bytes", at: out)
        }
        if out > limits.ratioGraceBytes && out / max(source.totalIn, 1) > limits.maxRatio {
            throw error(.decompressionLimit, "inflates more than \(limits.maxRatio):1 (\(out) bytes from \(source.totalIn))", at: out)
        }
    }

    /// Moves the unconsumed bytes to the front of the window.
    private func compact() {
        checksumConsumed()
        let count = end - start
        if count > 0 && start > 0 {
            UnsafeMutableRawBufferPointer(rebasing: window[0..<count])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: window[start..<end]))
        }
        windowOffset += UInt64(start)
        start = 0
        end = count
    }

    /// Brings `crc` up to the consumed bytes (before `start`), unless the
    /// source checksums them: the bytes it did not are in the window still
    /// (a compaction either left them to the source or took them here).
    private func checksumConsumed() {
        let consumed = windowOffset + UInt64(start)
        guard consumed > crcOffset else { return }
        let covered = source.checksummedBytes
        if covered >= consumed { return }
        if covered > crcOffset, let prefix = source.contentCRC(upTo: covered) {
            crc = prefix
            crcOffset = covered
        }
        crc = CRC32.update(crc, UnsafeRawBufferPointer(rebasing: window[Int(crcOffset - windowOffset)..<start]))
        crcOffset = consumed
    }

    /// The CRC-32 of every byte before `start`.
    private func contentCRC() throws(SnapshotError) -> UInt32 {
        let consumed = windowOffset + UInt64(start)
        if consumed > crcOffset, consumed <= source.checksummedBytes {
            guard let crc = source.contentCRC(upTo: consumed) else {
                throw error(.misuse, "the inflater no longer holds the bytes before offset \(consumed)", at: consumed)
            }
            return crc
        }
        checksumConsumed()
        return crc
    }

    /// Decodes the next record that makes an event from the window, or
    /// returns nil when the window holds no complete record.
    private func parse(items: ItemHandler?) throws(SnapshotError) -> Event? {
        while true {
            let available = end - start
            let recordOffset = windowOffset + UInt64(start)
            switch phase {
            case .finished:
                return nil
            case .afterTrailer:
                if available > 0 { throw error(.corruptSnapshot, "bytes after the trailer", at: recordOffset) }
                return nil
            case .preamble:
                guard available >= SnapshotFormat.preambleBytes else { return nil }
                let raw = UnsafeRawBufferPointer(rebasing: window[start..<end])
                guard Array(raw[0..<8]) == SnapshotFormat.magic else {
                    throw error(.corruptSnapshot, "not a Checklists snapshot (bad magic)", at: recordOffset)
                }
                let version = raw.u16BE(at: 8)
                guard version == SnapshotFormat.version else {
                    throw error(.unsupportedVersion, "snapshot format version \(version); this build reads version \(SnapshotFormat.version)", at: recordOffset + 8)
                }
                start += SnapshotFormat.preambleBytes
                phase = .header
            case .header, .records:
                guard available >= 2 else { return nil }
                let raw = UnsafeRawBufferPointer(rebasing: window[start..<end])
                var r = WireReader(UnsafeRawBufferPointer(rebasing: raw[1...]))
                guard let length = try? r.readVarint("length") else {
                    if available > 11 { throw error(.corruptSnapshot, "bad record length", at: recordOffset) }
                    return nil
                }
                guard length <= UInt64(limits.maxRecordBytes) else {
                    throw error(.recordTooLarge, "record of \(length) bytes exceeds the limit of \(limits.maxRecordBytes)", at: recordOffset)
                }
                let bodyStart = 1 + r.index
                guard UInt64(available - bodyStart) >= length else { return nil }
                let body = UnsafeRawBufferPointer(rebasing: raw[bodyStart..<(bodyStart + Int(length))])
                let event = try decode(type: raw[0], body: body, at: recordOffset, handler: items)
                start += bodyStart + Int(length)
                if let event { return event }
            }
        }
    }

    /// Decodes one record body and checks where it may occur. Returns nil for
    /// records that produce no event (skipped extensions, the trailer).
    private func decode(type: UInt8, body: UnsafeRawBufferPointer, at offset: UInt64,
                        handler: ItemHandler?) throws(SnapshotError) -> Event? {
        func bad(_ message: String) -> SnapshotError { error(.corruptSnapshot, message, at: offset) }
        func read<T>(_ decode: (inout WireReader) throws(ChecklistError) -> T) throws(SnapshotError) -> T {
            var r = WireReader(body)
            do { return try decode(&r) } catch {
                throw bad("record type 0x\(String(type, radix: 16)) does not decode: \(error)")
            }
        }
        if phase == .header {
            guard type == SnapshotRecordType.header.rawValue else { throw bad("first record is type \(type), not HEADER") }
            phase = .records
            return .header(try read { r throws(ChecklistError) in try SnapshotHeader.decode(from: &r) })
        }
        switch SnapshotRecordType(rawValue: type) {
        case .item:
            guard itemsLeft > 0 else { throw bad("ITEM record outside a list's announced items") }
            itemsLeft -= 1
            items += 1
            guard let handler else {
                return .item(try read { r throws(ChecklistError) in try Item.decodeSnapshotRecord(from: &r) })
            }
            if let view = ImportedItems.View.snapshotRecord(body) {
                try handler(view)
            } else {
                // Not the common shape (or not valid): the full decoder
                // makes the item, or the exact error.
                let item = try read { r throws(ChecklistError) in try Item.decodeSnapshotRecord(from: &r) }
                try item.withView { (view) throws(SnapshotError) in try handler(view) }
            }
            return nil
        case .list:
            guard itemsLeft == 0 else { throw bad("LIST record while \(itemsLeft) items of list \(currentList?.rawValue ?? 0) are missing") }
            let list = try read { r throws(ChecklistError) in try SnapshotList.decode(from: &r) }
            if let currentList, list.id <= currentList { throw bad("list \(list.id) follows list \(currentList): ids must ascend") }
            currentList = list.id
            itemsLeft = list.itemCount
            lists += 1
            return .list(list)
        case .trailer:
            guard itemsLeft == 0 else { throw bad("TRAILER while \(itemsLeft) items of list \(currentList?.rawValue ?? 0) are missing") }
            let trailer = try read { r throws(ChecklistError) in try SnapshotTrailer.decode(from: &r) }
            let crc = try contentCRC()
            let content = windowOffset + UInt64(start)
            guard trailer.contentBytes == content, trailer.crc32 == crc else {
                throw error(.snapshotChecksum, "content CRC-32 is 0x\(String(crc, radix: 16)) over \(content) bytes, trailer says 0x\(String(trailer.crc32, radix: 16)) over \(trailer.contentBytes)", at: offset)
            }
            guard trailer.listCount == lists, trailer.itemCount == items else {
                throw error(.snapshotChecksum, "trailer counts \(trailer.listCount) lists, \(trailer.itemCount) items; the snapshot holds \(lists) lists, \(items) items", at: offset)
            }
            self.trailer = trailer
            phase = .afterTrailer
            return nil
        case .header:
            throw bad("a second HEADER record")
        case .idempotency:
            return .idempotency(try read { r throws(ChecklistError) in try SnapshotIdempotency.decode(from: &r) })
        case nil:
            guard SnapshotRecordType.skippable.contains(type) else { throw bad("unknown record type 0x\(String(type, radix: 16))") }
            return nil
        }
    }
}
