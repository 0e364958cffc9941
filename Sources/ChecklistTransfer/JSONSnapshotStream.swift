import ChecklistModel
import ChecklistSnapshot

/// A JSON document turned into a snapshot for IMPORT while it is sent:
/// the first pass (`JSONDocumentScanner.scan`) checks the file and settles
/// every list's header; `read` then produces the snapshot a piece at a
/// time, reading each list's items again from the file. Memory stays
/// bounded by the number of lists, whatever the number of items (a 1.5 GB
/// file of 20 million items: 25 MB peak RSS for the whole `checklist import`).
///
/// Ids are settled as `ChecklistDocument.snapshotFile` does. Item ids given
/// twice in one list are left to the server, which refuses the import
/// naming the list and item (a client-side check would need memory for
/// every id).
public final class JSONSnapshotStream {
    private struct Planned {
        var info: JSONDocumentScanner.ListInfo
        var header: SnapshotList
    }

    private let scanner: JSONDocumentScanner
    private let plan: [Planned]
    private var writer: SnapshotWriter?
    private var pending: [UInt8] = []
    private var nextList = 0
    /// The list whose items are being written, its highest id so far and
    /// how many of its items were written.
    private var current: Planned?
    private var highest: UInt64 = 0
    private var written: UInt64 = 0
    /// Lists and items in the file.
    public let listCount: Int
    public let itemCount: UInt64

    /// Reads the whole file once (the first pass).
    /// - Parameters:
    ///   - readAt: reads the file's bytes at an offset (`pread`); 0 at the end.
    ///   - nameForItems: the name of the list made from a bare array of items.
    /// - Throws: `TransferError` naming the path of what is wrong.
    public init(readAt: @escaping (_ offset: UInt64, _ into: UnsafeMutableRawBufferPointer) throws -> Int,
                nameForItems: String, source: String, createdAt: Int64, namespace: Namespace = .default) throws {
        scanner = JSONDocumentScanner(reader: JSONByteReader(readAt: readAt), nameForItems: nameForItems)
        var ids = ListIDAllocator()
        var plan: [Planned] = []
        for (index, info) in try scanner.scan().enumerated() {
            let id = try ids.assign(info.id, "list \(index + 1) (\"\(info.name)\")")
            let next = ChecklistDocument.nextItemID(given: info.nextItemID, highestAfterNumbering: info.highestItemID + info.unnumbered)
            plan.append(Planned(info: info, header: SnapshotList(
                namespace: namespace, id: ListID(id), name: info.name, icon: info.icon ?? "No Icon",
                revision: info.revision ?? ChecklistDocument.revision(itemCount: Int(info.itemCount)),
                nextItemID: ItemID(next), itemCount: info.itemCount)))
        }
        plan.sort { $0.header.id < $1.header.id }
        self.plan = plan
        listCount = plan.count
        itemCount = plan.reduce(0) { $0 + $1.info.itemCount }
        let header = SnapshotHeader(createdAt: createdAt, source: source, listCount: UInt64(plan.count), itemCount: itemCount,
                                    startLSN: 0, nextListID: ListID((plan.last?.header.id.rawValue ?? 0) + 1))
        writer = try SnapshotWriter(header: header, options: .init(level: 6, compressionThreads: 1)) { [unowned self] bytes in
            self.pending.append(contentsOf: bytes)
        }
    }

    /// The next piece of the snapshot, up to `count` bytes; nil at its end.
    /// Items are written until the compressed output holds `count` bytes,
    /// so memory holds about one compression block (1 MiB of content).
    public func read(_ count: Int) throws -> [UInt8]? {
        while pending.count < count, let writer {
            if let list = current {
                if let entry = try scanner.nextItem() {
                    let id = try ChecklistDocument.itemID(entry.id?.rawValue, highest: &highest, "list \(list.header.id) (\"\(list.info.name)\")")
                    try writer.writeItem(Item(id: ItemID(id), fields: entry.fields))
                    written += 1
                } else {
                    guard written == list.info.itemCount else { throw TransferError("JSON: \(list.info.path) changed while it was read") }
                    current = nil
                }
            } else if nextList < plan.count {
                let list = plan[nextList]
                nextList += 1
                try writer.writeList(list.header)
                try scanner.startItems(of: list.info)
                current = list
                highest = list.info.highestItemID
                written = 0
            } else {
                try writer.finish(endLSN: 0)
                self.writer = nil
            }
        }
        guard !pending.isEmpty else { return nil }
        let n = min(count, pending.count)
        defer { pending.removeFirst(n) }
        return Array(pending.prefix(n))
    }
}
