import ChecklistModel
import ChecklistWire

/// The records at the start of a stretch of a snapshot's content (what
/// one worker inflated, Protocol/SNAPSHOT.md section 2), decoded on that
/// worker on the assumption that the stretch starts at a record: LIST
/// records and the rows of ITEM records built by the sink's
/// `SnapshotRowBuilder`, up to the first record that is not one of those,
/// that the fast row decoder or the builder does not take, or that the
/// stretch does not hold whole.
///
/// Whether the stretch really starts at a record, and whether its lists
/// and items are where the format allows them, is for the reading thread
/// to check (`SnapshotDecoder`): any doubt, and the bytes are read the
/// ordinary way, which finds the same errors at the same offsets as for
/// any other file. The bytes after the decoded records are read that way
/// too.
struct DecodedStretch: Sendable {
    /// Items of one list in the stretch: of the list in `list`, or (for
    /// the first segment only) of the list the stretch continues.
    struct Segment: Sendable {
        var list: SnapshotList?
        /// ITEM records that follow.
        var items: UInt64
        /// Their rows, as the builder made them (`SnapshotRowBuilder.Rows`).
        var rows: any Sendable
    }

    var segments: [Segment]
    /// The content bytes the records take, from the stretch's start.
    var bytes: Int

    /// Decodes the records at the start of `bytes`; nil when there is none
    /// of the kinds above (each within `limits`).
    static func decode<Builder: SnapshotRowBuilder>(_ bytes: UnsafeRawBufferPointer, limits: SnapshotLimits,
                                                    builder: inout Builder) -> DecodedStretch? {
        var segments: [Segment] = []
        var list: SnapshotList?
        var items: UInt64 = 0
        var at = 0
        decoding: while at + 2 <= bytes.count {
            var r = WireReader(UnsafeRawBufferPointer(rebasing: bytes[(at + 1)...]))
            guard let length = try? r.readVarint("length"), length <= UInt64(limits.maxRecordBytes) else { break }
            let bodyStart = at + 1 + r.index
            guard bytes.count - bodyStart >= Int(length) else { break }
            let body = UnsafeRawBufferPointer(rebasing: bytes[bodyStart..<(bodyStart + Int(length))])
            switch bytes[at] {
            case SnapshotRecordType.item.rawValue:
                guard let view = ImportedItems.View.snapshotRecord(body), builder.append(view) else { break decoding }
                items += 1
            case SnapshotRecordType.list.rawValue:
                var reader = WireReader(body)
                guard let next = try? SnapshotList.decode(from: &reader) else { break decoding }
                if list != nil || items > 0 { segments.append(Segment(list: list, items: items, rows: builder.take())) }
                list = next
                items = 0
            default:
                break decoding
            }
            at = bodyStart + Int(length)
        }
        guard at > 0 else { return nil }
        if list != nil || items > 0 { segments.append(Segment(list: list, items: items, rows: builder.take())) }
        return DecodedStretch(segments: segments, bytes: at)
    }
}
