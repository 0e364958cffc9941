import ChecklistModel
import ChecklistSnapshot
import ChecklistWire

/// A damaged end of the last log segment that recovery cut off: a record the
/// crash left half written, and anything after it.
public struct TornTail: Hashable, Sendable {
    /// The segment file.
    public var file: String
    /// Where the file was cut: the start of the first damaged record.
    public var offset: UInt64
    /// Bytes removed from the file.
    public var droppedBytes: UInt64
    /// Why the record at `offset` was found damaged.
    public var reason: String
}

/// What scanning one segment found.
struct SegmentScanResult {
    var firstLSN: LSN
    /// The LSN of the last intact record, or nil when the segment has none.
    var lastLSN: LSN?
    var records: Int
    /// Offset just past the last intact record (or past the header).
    var validEnd: Int
    /// Set when the tail from `validEnd` on must be cut off.
    var tornTail: TornTail?
}

/// Reads the records of one log segment from its bytes (Protocol/SNAPSHOT.md
/// section 6.3). Pure: the caller maps the file and truncates it.
enum LogSegmentScanner {
    /// Scans `bytes`, calling `onRecord` for each change of each intact
    /// record whose LSN is greater than `skipThrough` (records at or below it
    /// are checked but not decoded); the changes of a group share its LSN. Only the last segment (`isLast`) may have a torn tail; damage
    /// anywhere else, or damage followed by records that prove the damaged
    /// one had been made durable, throws `CORRUPT_LOG` naming file and offset.
    static func scan(_ b: UnsafeRawBufferPointer, file: String, nameLSN: LSN, isLast: Bool,
                     skipThrough: LSN, onRecord: (LSN, Change) throws -> Void) throws -> SegmentScanResult {
        let headerBytes = LogRecordFormat.segmentHeaderBytes
        guard let firstLSN = try checkHeader(b, file: file, nameLSN: nameLSN, isLast: isLast) else {
            // A crash right after creating the last segment left its header short or zeroed.
            return SegmentScanResult(firstLSN: nameLSN, lastLSN: nil, records: 0, validEnd: 0,
                                     tornTail: TornTail(file: file, offset: 0, droppedBytes: UInt64(b.count),
                                                        reason: "segment header incomplete"))
        }
        var result = SegmentScanResult(firstLSN: firstLSN, lastLSN: nil, records: 0, validEnd: headerBytes, tornTail: nil)
        var p = headerBytes
        var expected = firstLSN
        while p < b.count {
            let damage: String
            switch frame(b, at: p) {
            case .intact(let payload, let next):
                let lsn = try replay(payload, at: p, file: file, expected: expected, skipThrough: skipThrough, onRecord)
                result.lastLSN = lsn
                result.records += 1
                expected = lsn + 1
                p = next
                result.validEnd = p
                continue
            case .short(let why): damage = why
            case .badChecksum: damage = "record fails its CRC32"
            }
            result.tornTail = try tornTail(b, at: p, file: file, isLast: isLast, expected: expected, damage: damage)
            return result
        }
        return result
    }

    static func corrupt(_ file: String, _ offset: Int, _ message: String) -> PersistenceError {
        PersistenceError(.corruptLog, message, file: file, offset: UInt64(offset))
    }

    /// Checks the segment header and returns its first LSN, or nil when the
    /// last segment's header is incomplete (a crash right after creating
    /// it); anywhere else a bad header is damage and throws.
    private static func checkHeader(_ b: UnsafeRawBufferPointer, file: String, nameLSN: LSN, isLast: Bool) throws -> LSN? {
        let headerBytes = LogRecordFormat.segmentHeaderBytes
        guard b.count >= headerBytes, Array(b[0..<4]) == LogRecordFormat.magic else {
            if isLast && b.allSatisfy({ $0 == 0 }) || isLast && b.count < headerBytes { return nil }
            throw corrupt(file, 0, "not a log segment (bad magic or short header)")
        }
        let version = b.u16BE(at: 4)
        guard version == LogRecordFormat.version else {
            throw PersistenceError(.unsupportedVersion, "log segment version \(version); this build reads version \(LogRecordFormat.version)", file: file, offset: 4)
        }
        let firstLSN = b.u64BE(at: 8)
        guard firstLSN == nameLSN, firstLSN > 0 else {
            throw corrupt(file, 8, "segment header says first LSN \(firstLSN), its name says \(nameLSN)")
        }
        return firstLSN
    }

    /// Decodes the intact record at `p` (its CRC passed), checks that it has
    /// the `expected` LSN, hands its changes to `onRecord` unless it is at
    /// or below `skipThrough`, and returns its LSN.
    private static func replay(_ payload: UnsafeRawBufferPointer, at p: Int, file: String, expected: LSN, skipThrough: LSN,
                               _ onRecord: (LSN, Change) throws -> Void) throws -> LSN {
        var r = WireReader(payload)
        let lsn: LSN
        do {
            lsn = try r.readVarint("lsn")
            _ = try r.readVarint("lag")
        } catch {
            throw corrupt(file, p, "record passes its CRC but cannot be decoded: \(error)")
        }
        guard lsn == expected else {
            throw corrupt(file, p, "record has LSN \(lsn), expected \(expected)")
        }
        guard lsn > skipThrough else { return lsn }
        let changes: [Change]
        do { changes = try LogRecordContent.decode(from: &r) } catch {
            throw corrupt(file, p, "record LSN \(lsn) passes its CRC but cannot be decoded: \(error)")
        }
        guard r.remaining == 0 else {
            throw corrupt(file, p, "record LSN \(lsn) has \(r.remaining) bytes after its change")
        }
        for change in changes { try onRecord(lsn, change) }
        return lsn
    }

    /// Damage at `p`: the torn end of an unsynced write (returned, to be cut
    /// off), or a record that was durable once (thrown as `CORRUPT_LOG`).
    private static func tornTail(_ b: UnsafeRawBufferPointer, at p: Int, file: String, isLast: Bool, expected: LSN,
                                 damage: String) throws -> TornTail {
        guard isLast else {
            throw corrupt(file, p, "\(damage) (LSN \(expected)) in a segment that was complete and fsynced")
        }
        if let proof = durableProof(b, after: p, expected: expected) {
            throw corrupt(file, p, "\(damage) (LSN \(expected)), but the intact record at offset \(proof) was appended after LSN \(expected) was durable")
        }
        // Zeros to the end: the log's preallocation (or a grown file whose data never reached the disk).
        let zeros = UnsafeRawBufferPointer(rebasing: b[p...]).allSatisfy { $0 == 0 }
        return TornTail(file: file, offset: UInt64(p), droppedBytes: UInt64(b.count - p),
                        reason: zeros ? "zeros after the last record" : damage)
    }

    enum Frame {
        case intact(payload: UnsafeRawBufferPointer, next: Int)
        case short(String)
        case badChecksum
    }

    /// Frames the record at `p`: header, length and CRC.
    static func frame(_ b: UnsafeRawBufferPointer, at p: Int) -> Frame {
        let h = LogRecordFormat.recordHeaderBytes
        guard b.count - p >= h else { return .short("record header cut off (\(b.count - p) of \(h) bytes)") }
        let length = Int(b.u32BE(at: p))
        guard length >= 2 else { return .short("record length \(length) is impossible") }
        guard length <= b.count - p - h else {
            return .short("record payload cut off (\(b.count - p - h) of \(length) bytes)")
        }
        let payload = UnsafeRawBufferPointer(rebasing: b[(p + h)..<(p + h + length)])
        guard CRC32.update(0, payload) == b.u32BE(at: p + 4) else { return .badChecksum }
        return .intact(payload: payload, next: p + h + length)
    }

    /// Looks for intact records after damage at `p` (where LSN `expected`
    /// should have started). Returns the offset of one whose `lsn - lag`
    /// (the durable LSN when it was appended) is at least `expected`: proof
    /// that the damaged record had been fsynced. Intact records without that
    /// proof are the out-of-order remains of a torn, never-fsynced write.
    static func durableProof(_ b: UnsafeRawBufferPointer, after p: Int, expected: LSN) -> Int? {
        let h = LogRecordFormat.recordHeaderBytes
        var q = p + 1
        while q + h + 2 <= b.count {
            // Cheap filters before the CRC: plausible length and LSN.
            let length = Int(b.u32BE(at: q))
            if length >= 2, length <= b.count - q - h,
               let (lsn, lag) = peekLSN(b, payloadAt: q + h, length: length),
               lsn >= expected, lsn - expected <= UInt64(b.count - p),
               case .intact(_, var next) = frame(b, at: q) {
                // A chain of intact records from here on.
                if lag <= lsn && lsn - lag >= expected { return q }
                var at = next
                while case .intact(let payload, let after) = frame(b, at: at) {
                    if let (l, g) = peekLSN(payload), g <= l, l - g >= expected { return at }
                    at = after
                    next = after
                }
                q = max(q + 1, next)
                continue
            }
            q += 1
        }
        return nil
    }

    static func peekLSN(_ b: UnsafeRawBufferPointer, payloadAt: Int, length: Int) -> (LSN, UInt64)? {
        peekLSN(UnsafeRawBufferPointer(rebasing: b[payloadAt..<(payloadAt + length)]))
    }

    static func peekLSN(_ payload: UnsafeRawBufferPointer) -> (LSN, UInt64)? {
        var r = WireReader(payload)
        guard let lsn = try? r.readVarint("lsn"), let lag = try? r.readVarint("lag") else { return nil }
        return (lsn, lag)
    }
}
