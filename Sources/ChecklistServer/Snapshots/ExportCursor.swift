import ChecklistStorage
import ChecklistModel
import ChecklistSnapshot
import ChecklistStore
import ChecklistWire
import Foundation

/// One connection's running EXPORT: a snapshot written from a store cut
/// taken at START, produced a chunk at a time as the client asks for them
/// (Protocol/SPEC.md section 6.16).
///
/// Memory is bounded whatever the size of the export: the writer's block
/// (256 KiB uncompressed), the compressor, and compressed bytes not yet
/// sent (at most about one chunk plus one block). The cut pins the lists'
/// storage as it was at START: changes made meanwhile copy what they touch.
///
/// It writes lists only, never the server's memory of idempotency keys (an
/// IDEMPOTENCY record would show one namespace's client other namespaces'
/// keys; Protocol/SNAPSHOT.md section 3.8).
///
/// Not thread-safe: used by one thread at a time, through the `Exclusive`
/// that holds it: the connection's event loop, or the transfer worker
/// working on a chunk (`TransferWorkers`).
final class ExportCursor {
    /// Rows written between checks of the output.
    private static let rowBatch = 1024

    let listCount: UInt64
    let itemCount: UInt64
    /// The sequence the next NEXT must ask for.
    private(set) var nextSequence: UInt64 = 0
    private let cut: StoreCut
    private let namespace: Namespace
    private let lists: [ListID]
    private var listIndex = 0
    /// Rows of `lists[listIndex]` written so far; nil before its LIST record.
    private var rowOffset: Int?
    private var rowsInList = 0
    private let writer: SnapshotWriter
    private let output: Output
    private var itemsWritten: UInt64 = 0
    private var finished = false
    /// The whole content's size, once finished.
    private var finalRawBytes: UInt64?

    /// Compressed bytes waiting to be sent.
    private final class Output {
        var bytes: [UInt8] = []
        var start = 0
        var count: Int { bytes.count - start }
    }

    /// Starts an export of `requested` lists of `namespace` (all when
    /// empty) from `cut`.
    /// - Throws: `NOT_FOUND` naming the first requested list the namespace
    ///   does not have.
    /// Whether items' client keys are written: only for a client that
    /// announced CLIENT_KEYS (Protocol/SPEC.md 6.16), so that an older
    /// client's snapshot reader never meets ItemFields bit 4.
    private let clientKeys: Bool

    init(cut: StoreCut, namespace: Namespace, requested: [ListID], source: String, clientKeys: Bool = true) throws {
        self.clientKeys = clientKeys
        var ids: [ListID]
        if requested.isEmpty {
            ids = cut.listIDs(in: namespace)
        } else {
            ids = Array(Set(requested)).sorted()
            for id in requested where cut.exportedList(id, in: namespace) == nil {
                throw ChecklistError.notFound("list \(id) not found")
            }
        }
        var items: UInt64 = 0
        for id in ids { items += cut.exportedList(id, in: namespace)?.summary.itemCount ?? 0 }
        self.cut = cut
        self.namespace = namespace
        self.lists = ids
        listCount = UInt64(ids.count)
        itemCount = items
        let output = Output()
        self.output = output
        let header = SnapshotHeader(createdAt: Int64(Date().timeIntervalSince1970), source: source,
                                    listCount: listCount, itemCount: items, startLSN: 0, nextListID: cut.nextListID)
        writer = try SnapshotWriter(header: header, options: .init(level: 1, blockBytes: 256 << 10, compressionThreads: 1)) { bytes in
            output.bytes.append(contentsOf: bytes)
        }
    }

    /// Uncompressed snapshot bytes produced so far.
    var rawBytes: UInt64 { finalRawBytes ?? writer.rawBytes }

    /// Produces chunk `nextSequence` of at most `maxBytes` data bytes and
    /// hands its header fields (with empty `data`) and its data, borrowed,
    /// to `encode`. Returns its header: status END when it completes the
    /// snapshot.
    @discardableResult
    func nextChunk(maxBytes: Int, _ encode: (ExportChunk, UnsafeRawBufferPointer) -> Void) throws -> ExportChunk {
        while output.count < maxBytes && !finished {
            try step()
        }
        let take = min(maxBytes, output.count)
        let header = ExportChunk(sequence: nextSequence, status: finished && output.count == take ? .end : .more,
                                 listCount: listCount, itemCount: itemCount, itemsWritten: itemsWritten,
                                 rawBytes: rawBytes, data: [])
        output.bytes.withUnsafeBytes { raw in
            encode(header, UnsafeRawBufferPointer(rebasing: raw[output.start..<(output.start + take)]))
        }
        output.start += take
        if output.start == output.bytes.count {
            output.bytes.removeAll(keepingCapacity: true)
            output.start = 0
        } else if output.start >= 256 << 10 {
            output.bytes.removeSubrange(0..<output.start)
            output.start = 0
        }
        nextSequence += 1
        return header
    }

    /// Writes the next LIST record or batch of rows, or finishes.
    private func step() throws {
        guard listIndex < lists.count else {
            finalRawBytes = try writer.finish(endLSN: 0).rawBytes
            finished = true
            return
        }
        let id = lists[listIndex]
        guard let offset = rowOffset else {
            guard let list = cut.exportedList(id, in: namespace) else {
                listIndex += 1
                return
            }
            let s = list.summary
            try writer.writeList(SnapshotList(namespace: namespace, id: s.id, name: s.name, icon: s.icon, revision: s.revision,
                                              nextItemID: list.nextItemID, itemCount: s.itemCount))
            rowOffset = 0
            rowsInList = Int(s.itemCount)
            return
        }
        if offset >= rowsInList {
            listIndex += 1
            rowOffset = nil
            return
        }
        let visited = try SnapshotExport.writeRows(to: writer, clientKeys: clientKeys) {
            cut.forEachRow(of: id, from: offset, limit: Self.rowBatch, $0)
        }
        itemsWritten += UInt64(visited)
        rowOffset = offset + visited
        if visited == 0 { rowOffset = rowsInList }
    }
}
