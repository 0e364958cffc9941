import ChecklistModel
import ChecklistSnapshot
import ChecklistWire

/// What loading one list did.
public struct ListLoadReport: Hashable, Sendable {
    public var list: ListID
    /// The revision of the checkpoint read (0: the list has none).
    public var checkpointRevision: Revision
    /// Items the checkpoint held.
    public var checkpointItems: UInt64
    /// Compressed checkpoint bytes read.
    public var checkpointBytes: Int
    /// Changes after the checkpoint handed to `replay`.
    public var changesReplayed: Int
    /// Retained changes at or before the checkpoint handed to `retained`.
    public var changesRetained: Int = 0
}

extension PostgresStore {
    /// Loads one list: its checkpoint (a one-list snapshot) goes to `sink`
    /// exactly as a snapshot file's content does at recovery (header, list,
    /// items in order, trailer), then every change after the checkpoint to
    /// `replay`, in revision order. Both are read in one REPEATABLE READ
    /// transaction, so a checkpoint written meanwhile cannot mix in. The
    /// retained changes the checkpoint already holds (the change feed kept
    /// before it, `trimChanges`) go to `retained` first, in revision order.
    ///
    /// - Returns: nil when there is no such list.
    ///
    /// A checkpoint of at least `StagedCheckpoint.minimumBytes` is inflated
    /// on `inflateThreads` threads (its gzip members in parallel) while this
    /// thread decodes; 1 inflates it here as one stream.
    public func loadList(_ id: ListID, into sink: some SnapshotRestoreSink, retained: (Change) throws -> Void = { _ in },
                         inflateThreads: Int = 1, replay: (Change) throws -> Void) throws -> ListLoadReport? {
        try connection.transaction(.readOnlySnapshot) {
            try loadListInTransaction(id, into: sink, retained: retained, inflateThreads: inflateThreads, replay: replay)
        }
    }

    /// Loads every list (as `loadList`) in id order, in one snapshot of the
    /// database; first raises the sink's next list id to the stored one.
    public func loadAll(into sink: some SnapshotRestoreSink, retained: (Change) throws -> Void = { _ in },
                        replay: (Change) throws -> Void) throws -> [ListLoadReport] {
        try connection.transaction(.readOnlySnapshot) {
            let next = try nextListID()
            try sink.restoreHeader(SnapshotHeader(createdAt: 0, source: "postgres", listCount: 0, itemCount: 0,
                                                  startLSN: 0, nextListID: next))
            let ids = try connection.execute(Statements.allListIDs)
            var reports: [ListLoadReport] = []
            for row in 0..<ids.rowCount {
                if let report = try loadListInTransaction(ListID(try ids.uint64(row, 0)), into: sink, retained: retained,
                                                          inflateThreads: 1, replay: replay) {
                    reports.append(report)
                }
            }
            return reports
        }
    }

    private func loadListInTransaction(_ id: ListID, into sink: some SnapshotRestoreSink, retained: (Change) throws -> Void,
                                       inflateThreads: Int, replay: (Change) throws -> Void) throws -> ListLoadReport? {
        let listID = try PostgresValue.id(id.rawValue, "list id")
        let row = try connection.execute(Statements.listByID, [listID])
        guard row.rowCount == 1 else { return nil }
        let checkpointRevision = try row.uint64(0, 9)
        var report = ListLoadReport(list: id, checkpointRevision: checkpointRevision, checkpointItems: 0,
                                    checkpointBytes: 0, changesReplayed: 0)
        if checkpointRevision > 0 {
            let parts = try connection.execute(Statements.checkpointParts, [listID])
            for part in 0..<parts.rowCount where try parts.uint64(part, 0) != checkpointRevision {
                throw PostgresError(.corruptData, "list \(id): a checkpoint part of revision \(try parts.uint64(part, 0)), the list says \(checkpointRevision)")
            }
            let (trailer, bytes) = try Self.readCheckpoint(parts, of: id, into: sink, inflateThreads: inflateThreads)
            report.checkpointItems = trailer.itemCount
            report.checkpointBytes = bytes
        }
        // Every stored change: those the checkpoint holds are the retained
        // feed (bounded by trimChanges), the rest are replayed.
        let changes = try connection.execute(Statements.changesAfter, [listID, .int64(0), .int64(.max)])
        for index in 0..<changes.rowCount {
            if try changes.uint64(index, 0) <= checkpointRevision {
                // An import the checkpoint holds replaced the list's history:
                // the feed restarts after it (CHANGES_SINCE from before it is
                // RESYNC_REQUIRED), so the whole-list change is not decoded.
                if changes.withBytes(index, 1, { $0.first }) == Self.importedKind { continue }
                try retained(try Self.change(changes, index, column: 1))
                report.changesRetained += 1
            } else {
                try replay(try Self.change(changes, index, column: 1))
                report.changesReplayed += 1
            }
        }
        return report
    }

    /// Reads a checkpoint's parts into `sink`: a big one staged in memory and
    /// inflated on `inflateThreads` threads (`StagedCheckpoint`), a small one
    /// (or with one thread, or where staging fails) as one stream straight
    /// out of the result. Returns the trailer and the compressed bytes read.
    private static func readCheckpoint(_ parts: PostgresResult, of id: ListID, into sink: some SnapshotRestoreSink,
                                       inflateThreads: Int) throws -> (SnapshotTrailer, Int) {
        var total = 0
        for part in 0..<parts.rowCount { total += parts.withBytes(part, 1) { $0.count } }
        if inflateThreads > 1, total >= StagedCheckpoint.minimumBytes, let staged = StagedCheckpoint.make(parts, column: 1) {
            do {
                let reader = try SnapshotReader(path: staged.path, inflateThreads: inflateThreads)
                return (try reader.readAll(into: sink), staged.count)
            } catch var error as SnapshotError {
                error.file = "checkpoint of list \(id)"  // as the streamed read names it, not the staging file
                throw error
            }
        }
        let cursor = PartCursor(parts)
        let reader = try SnapshotReader(name: "checkpoint of list \(id)") { buffer throws(SnapshotError) in cursor.read(into: buffer) }
        return (try reader.readAll(into: sink), cursor.total)
    }

    /// The first byte of an imported list's Change record body (Protocol/SNAPSHOT.md section 7).
    static let importedKind: UInt8 = 5

    /// Decodes a stored Change record body (Protocol/SNAPSHOT.md section 7).
    static func change(_ result: PostgresResult, _ row: Int, column: Int) throws(PostgresError) -> Change {
        do {
            return try result.withBytes(row, column) { bytes in
                var reader = WireReader(bytes)
                return try Change.decode(from: &reader)
            }
        } catch {
            throw PostgresError(.corruptData, "a stored change does not decode: \(error)")
        }
    }
}

/// Feeds a snapshot reader from the rows of a checkpoint, part after part,
/// copying straight out of the result.
private final class PartCursor {
    private let parts: PostgresResult
    private var part = 0
    private var offset = 0
    private(set) var total = 0

    init(_ parts: PostgresResult) {
        self.parts = parts
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard buffer.count > 0 else { return 0 }
        while part < parts.rowCount {
            let copied = parts.withBytes(part, 1) { bytes -> Int in
                let take = min(buffer.count, bytes.count - offset)
                if take > 0 { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + take])) }
                return take
            }
            if copied > 0 {
                offset += copied
                total += copied
                return copied
            }
            part += 1
            offset = 0
        }
        return 0
    }
}
