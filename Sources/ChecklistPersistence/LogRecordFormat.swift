import ChecklistModel
import ChecklistSnapshot
import ChecklistWire

/// The on-disk layout of write-ahead log segments and records
/// (Protocol/SNAPSHOT.md section 6). Pure: no I/O.
public enum LogRecordFormat {
    /// Bytes of the segment header: magic `CKWL`, u16 version, u16 flags, u64 first LSN.
    public static let segmentHeaderBytes = 16
    /// Bytes before each record's payload: u32 length, u32 CRC32.
    public static let recordHeaderBytes = 8
    public static let version: UInt16 = 1
    /// Most bytes of one record's payload (its `length` is a u32).
    public static let maxPayloadBytes = Int(UInt32.max)
    /// Most uncompressed snapshot bytes one import may hold: an import is
    /// one commit, logged as one record, whose encoding is no larger than
    /// the snapshot content it came from (the same item encoding, fewer
    /// bytes per list) plus its deletions; 256 MiB are left for those.
    public static let maxImportRawBytes: UInt64 = UInt64(UInt32.max) + 1 - (256 << 20)
    static let magic: [UInt8] = [0x43, 0x4B, 0x57, 0x4C] // "CKWL"

    /// The segment file name for a segment whose first record is `firstLSN`.
    public static func segmentName(firstLSN: LSN) -> String {
        "wal-" + hex16(firstLSN) + ".log"
    }

    /// The first LSN a segment file name stands for, or nil if `name` is not
    /// a segment name.
    public static func firstLSN(ofSegmentName name: String) -> LSN? {
        parseHexName(name, prefix: "wal-", suffix: ".log")
    }

    /// Appends a segment header.
    public static func writeSegmentHeader(firstLSN: LSN, into w: inout WireWriter) {
        w.bytes.append(contentsOf: magic)
        w.writeU8(UInt8(version >> 8)); w.writeU8(UInt8(version & 0xFF))
        w.writeU8(0); w.writeU8(0)
        for shift in stride(from: 56, through: 0, by: -8) { w.writeU8(UInt8(truncatingIfNeeded: firstLSN >> UInt64(shift))) }
    }

    /// Appends one framed record: u32 payload length, u32 CRC32 of the payload,
    /// then the payload `lsn varint, lag varint, content` where
    /// `lag = lsn - durableLSN` at append time (at least 1) and the content
    /// is `changes`, one commit (`LogRecordContent`).
    public static func appendRecord(lsn: LSN, durable: LSN, changes: [Change], into w: inout WireWriter) {
        let start = beginRecord(lsn: lsn, durable: durable, into: &w)
        LogRecordContent.encode(changes, into: &w)
        finishRecord(at: start, in: &w)
    }

    /// Appends one framed record of a commit of the one change `change`:
    /// the same bytes as `appendRecord(lsn:durable:changes:into:)` with
    /// `[change]`, without making that array (a batch of patches appends
    /// one such record per patch).
    public static func appendRecord(lsn: LSN, durable: LSN, change: Change, into w: inout WireWriter) {
        if case .patched(let ops) = change.kind {
            appendPatchRecord(lsn: lsn, durable: durable, namespace: change.namespace, list: change.list,
                              revision: change.revision, ops: ops, key: change.idempotencyKey, into: &w)
            return
        }
        let start = beginRecord(lsn: lsn, durable: durable, into: &w)
        LogRecordContent.encode(change, into: &w)
        finishRecord(at: start, in: &w)
    }

    /// `appendRecord(lsn:durable:change:into:)` of `changes[index]`, a
    /// patch (most records) read in place, field by field: handed whole to
    /// a function, a change is copied first.
    public static func appendRecord(lsn: LSN, durable: LSN, of changes: [Change], at index: Int, into w: inout WireWriter) {
        guard case .patched(let ops) = changes[index].kind else {
            appendRecord(lsn: lsn, durable: durable, change: changes[index], into: &w)
            return
        }
        appendPatchRecord(lsn: lsn, durable: durable, namespace: changes[index].namespace, list: changes[index].list,
                          revision: changes[index].revision, ops: ops, key: changes[index].idempotencyKey, into: &w)
    }

    /// The record of a commit of one patch, given field by field: sized
    /// first, then written in one pass (one check of the array's capacity,
    /// not one a byte); the bytes of `beginRecord`, `LogRecordContent.encode`
    /// and `finishRecord`.
    private static func appendPatchRecord(lsn: LSN, durable: LSN, namespace: Namespace, list: ListID, revision: Revision,
                                          ops: [AppliedOperation], key: IdempotencyKey?, into w: inout WireWriter) {
        let lag = lag(lsn: lsn, durable: durable)
        let count = headBytes(lsn: lsn, lag: lag)
            + Change.patchFieldBytes(namespace: namespace, list: list, revision: revision, ops: ops) + Change.keyBytes(key)
        let start = w.count
        w.reserveForAppending(count)
        w.writeReserved(count: count) { c in
            writeHead(lsn: lsn, lag: lag, into: &c)
            Change.writePatchFields(namespace: namespace, list: list, revision: revision, ops: ops, into: &c)
            Change.writeKey(key, to: &c)
        }
        finishRecord(at: start, in: &w)
    }

    /// Starts a record: room for its header, then its LSN and lag; returns
    /// where it starts, for `finishRecord` once its content follows.
    @inline(__always)
    private static func beginRecord(lsn: LSN, durable: LSN, into w: inout WireWriter) -> Int {
        let start = w.count
        let lag = lag(lsn: lsn, durable: durable)
        w.writeReserved(count: headBytes(lsn: lsn, lag: lag)) { writeHead(lsn: lsn, lag: lag, into: &$0) }
        return start
    }

    /// Bytes of a record's start: its header, then its LSN and lag.
    private static func headBytes(lsn: LSN, lag: UInt64) -> Int {
        recordHeaderBytes + WireSize.varint(lsn) + WireSize.varint(lag)
    }

    /// Writes a record's start (`headBytes` of it): the header's 8 bytes
    /// zero, filled in by `finishRecord`, then the LSN and lag.
    private static func writeHead(lsn: LSN, lag: UInt64, into c: inout WireCursor) {
        c.writeU32BE(0)
        c.writeU32BE(0)
        c.writeVarint(lsn)
        c.writeVarint(lag)
    }

    /// Fills in the header of the record started at `start`: the length
    /// and CRC32 of everything after the header.
    @inline(__always)
    private static func finishRecord(at start: Int, in w: inout WireWriter) {
        let payloadStart = start + recordHeaderBytes
        let length = w.count - payloadStart
        // Imports are bounded by maxImportRawBytes so that this holds.
        precondition(length <= maxPayloadBytes, "a log record of \(length) bytes does not fit its u32 length")
        w.bytes.withUnsafeMutableBytes { record in
            let crc = CRC32.update(0, UnsafeRawBufferPointer(rebasing: record[payloadStart...]))
            // u32 length then u32 CRC, both big-endian: one big-endian u64.
            let header = UInt64(UInt32(length)) << 32 | UInt64(crc)
            record.storeBytes(of: header.bigEndian, toByteOffset: start, as: UInt64.self)
        }
    }

    /// A record's `lag`: how far its LSN is past the durable one (at least 1).
    static func lag(lsn: LSN, durable: LSN) -> UInt64 { lsn - min(durable, lsn - 1) }

    /// Produces the same framed record as `appendRecord(lsn:durable:changes:into:)`
    /// in pieces of about 1 MiB, handed to `emit` in order: the record is
    /// never one buffer, however many items it holds. Encodes the changes
    /// twice (first for the length and CRC the header needs, then for the
    /// bytes), so `changes` must read the same both times: imported lists
    /// are immutable copies.
    static func streamRecord(lsn: LSN, durable: LSN, changes: [Change], scratch w: inout WireWriter,
                             pieceBytes: Int = LogRecordContent.drainBytes, emit: (UnsafeRawBufferPointer) -> Void) {
        func payload(_ w: inout WireWriter, _ drain: (inout WireWriter) -> Void) {
            w.writeVarint(lsn)
            w.writeVarint(lag(lsn: lsn, durable: durable))
            LogRecordContent.encode(changes, into: &w, drainAt: pieceBytes, drain: drain)
            drain(&w)
        }
        var length = 0
        var crc: UInt32 = 0
        w.reset()
        payload(&w) { w in
            length += w.count
            crc = w.bytes.withUnsafeBytes { CRC32.update(crc, $0) }
            w.reset()
        }
        precondition(length <= maxPayloadBytes, "a log record of \(length) bytes does not fit its u32 length")
        w.writeU32BE(UInt32(length))
        w.writeU32BE(crc)
        var written = -recordHeaderBytes
        payload(&w) { w in
            written += w.count
            w.bytes.withUnsafeBytes { emit($0) }
            w.reset()
        }
        precondition(written == length, "a record's two encodings differ")
    }
}

/// 16 lower-case hex digits, zero padded.
func hex16(_ v: UInt64) -> String {
    let digits = String(v, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
}

/// Parses `prefix` + 16 hex digits + `suffix`.
func parseHexName(_ name: String, prefix: String, suffix: String) -> UInt64? {
    guard name.hasPrefix(prefix), name.hasSuffix(suffix),
          name.utf8.count == prefix.utf8.count + 16 + suffix.utf8.count else { return nil }
    let hex = name.dropFirst(prefix.count).dropLast(suffix.count)
    guard hex.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else { return nil }
    return UInt64(hex, radix: 16)
}
