import ChecklistModel
import ChecklistSnapshot

/// Builds one list's checkpoint: a complete snapshot (Protocol/SNAPSHOT.md:
/// HEADER, the LIST, its ITEMs, TRAILER) holding just that list, gzip
/// compressed by the project's `SnapshotWriter`, cut into parts of at most
/// `partBytes` for the `list_checkpoints` table.
///
/// Write exactly `list.itemCount` items, then `finish()`. One thread.
public final class ListCheckpointBuilder {
    /// Compressed bytes per stored part (a row of `list_checkpoints`).
    public static let partBytes = 1 << 20

    public let list: SnapshotList
    private let writer: SnapshotWriter
    private let sink: PartSink
    /// Unchecked items written so far (for the `lists` row).
    public private(set) var uncheckedCount: UInt64 = 0

    /// Starts the checkpoint of `list` (its revision is the checkpoint's).
    /// One compression thread: a checkpoint is written beside a serving node.
    public init(list: SnapshotList, createdAt: Int64 = 0) throws(SnapshotError) {
        self.list = list
        let sink = PartSink()
        self.sink = sink
        let header = SnapshotHeader(createdAt: createdAt, source: "checklistd checkpoint", listCount: 1,
                                    itemCount: list.itemCount, startLSN: 0, nextListID: ListID(list.id.rawValue + 1))
        writer = try SnapshotWriter(header: header, options: .init(level: 1, compressionThreads: 1)) { chunk throws(SnapshotError) in
            sink.append(chunk)
        }
        try writer.writeList(list)
    }

    /// Appends the list's next item.
    public func append(_ item: Item) throws(SnapshotError) {
        try writer.writeItem(item)
        if !item.checked { uncheckedCount += 1 }
    }

    /// Ends the snapshot and returns its parts, in order.
    public func finish() throws(SnapshotError) -> [[UInt8]] {
        try writer.finish(endLSN: 0)
        return sink.finish()
    }
}

/// Collects compressed output into parts of at most `partBytes`.
private final class PartSink {
    private var parts: [[UInt8]] = []
    private var current: [UInt8] = []

    func append(_ chunk: UnsafeRawBufferPointer) {
        var rest = chunk[...]
        while !rest.isEmpty {
            let take = min(rest.count, ListCheckpointBuilder.partBytes - current.count)
            current.append(contentsOf: rest.prefix(take))
            rest = rest.dropFirst(take)
            if current.count == ListCheckpointBuilder.partBytes {
                parts.append(current)
                current = []
            }
        }
    }

    func finish() -> [[UInt8]] {
        if !current.isEmpty { parts.append(current) }
        current = []
        return parts
    }
}
