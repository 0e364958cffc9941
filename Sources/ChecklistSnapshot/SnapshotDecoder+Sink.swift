import ChecklistModel

// Handing a decoder's records to a `SnapshotRestoreSink`: the one loop
// behind `SnapshotReader.readAll(into:)` (a file) and the IMPORT stream
// (chunks fed as they arrive).
extension SnapshotDecoder {
    /// Hands every record the input given so far holds to `sink`, in file
    /// order: the header (`restoreHeader`) when it is read here, lists,
    /// items one by one (`restoreItem`, lent) or as rows built on the
    /// source's workers (`restoreRows`), idempotency keys, and at the
    /// verified end `restoreEnd`. Returns the trailer at the end, nil when
    /// the decoder needs more input (`feed`, `fillInput`, `endInput`).
    /// Errors thrown by `sink` come out as they are.
    public func restore(into sink: some SnapshotRestoreSink) throws -> SnapshotTrailer? {
        while true {
            // The decoder only hands out items after their list. The list
            // is captured as a constant: a captured variable would be
            // checked for exclusive access on every row.
            let list = currentList ?? ListID(0)
            // The list of the stretches taken in this call (several may be).
            var stretchList = list
            let event = try next(lendingItems: { row in try sink.restoreItem(row, in: list) }, takingStretches: { stretch in
                for segment in stretch.segments {
                    if let next = segment.list {
                        stretchList = next.id
                        try sink.restoreList(next)
                    }
                    if segment.items > 0 { try sink.restoreRows(segment.rows, in: stretchList) }
                }
            })
            switch event {
            case nil:
                continue
            case .header(let header):
                try sink.restoreHeader(header)
            case .list(let list):
                try sink.restoreList(list)
            case .item(let item):
                try sink.restoreItem(item, in: list)
            case .idempotency(let client):
                try sink.restoreIdempotency(client)
            case .end(let trailer):
                try sink.restoreEnd(trailer)
                return trailer
            case .needInput:
                return nil
            }
        }
    }
}
