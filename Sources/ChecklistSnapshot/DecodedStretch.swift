import ChecklistModel
import ChecklistWire

/// The records of one stretch of a snapshot's content (what one worker
/// inflated, Protocol/SNAPSHOT.md section 2), decoded on that worker on
/// the assumption that the stretch starts at a record: LIST records and the
/// rows of ITEM records built by the sink's `SnapshotRowBuilder`.
///
/// Made only when every byte of the stretch is a LIST or an ITEM record
/// the fast row decoder takes, the last one ending exactly at the
/// stretch's end. Whether the stretch really starts at a record, and
/// whether its lists and items are where the format allows them, is for
/// the reading thread to check (`SnapshotDecoder`): any doubt, and the
/// stretch is read the ordinary way, which finds the same errors at the
/// same offsets as for any other file.
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

    /// Decodes `bytes`; nil unless they are whole records of the kinds
    /// above, each within `limits`.
    static func decode<Builder: SnapshotRowBuilder>(_ bytes: UnsafeRawBufferPointer, limits: SnapshotLimits,
                                                    builder: inout Builder) -> DecodedStretch? {
        var segments: [Segment] = []
        var list: SnapshotList?
        var items: UInt64 = 0
        var at = 0
        while at < bytes.count {
            guard at + 2 <= bytes.count else { return nil }
            var r = WireReader(UnsafeRawBufferPointer(rebasing: bytes[(at + 1)...]))
            guard let length = try? r.readVarint("length"), length <= UInt64(limits.maxRecordBytes) else { return nil }
            let bodyStart = at + 1 + r.index
            guard bytes.count - bodyStart >= Int(length) else { return nil }
            let body = UnsafeRawBufferPointer(rebasing: bytes[bodyStart..<(bodyStart + Int(length))])
            switch bytes[at] {
            case SnapshotRecordType.item.rawValue:
                guard let view = ImportedItems.View.snapshotRecord(body), builder.append(view) else { return nil }
                items += 1
            case SnapshotRecordType.list.rawValue:
                var reader = WireReader(body)
                guard let next = try? SnapshotList.decode(from: &reader) else { return nil }
                if list != nil || items > 0 { segments.append(Segment(list: list, items: items, rows: builder.take())) }
                list = next
                items = 0
            default:
                return nil
            }
            at = bodyStart + Int(length)
        }
        if list != nil || items > 0 { segments.append(Segment(list: list, items: items, rows: builder.take())) }
        return DecodedStretch(segments: segments)
    }
}
