import ChecklistModel
import ChecklistSnapshot
import ChecklistStore
import ChecklistWire

/// One connection's running IMPORT: the snapshot arriving in DATA chunks
/// is decoded as it comes (bounded: `SnapshotDecoder`) into an
/// `ImportStaging`; END checks the trailer and applies everything at once
/// (Protocol/SPEC.md section 6.17). With inflate workers, those also
/// decode the records and build the rows' leaves, so this thread only
/// checks and files them (`restoreRows`).
///
/// Not thread-safe: used by one thread at a time, through the `Exclusive`
/// that holds it: the connection's event loop, or the transfer worker
/// working on a chunk (`TransferWorkers`).
final class ImportStream: SnapshotRestoreSink {
    let mode: ImportMode
    private let namespace: Namespace
    private let decoder: SnapshotDecoder
    /// Where the DATA chunks go when their members are inflated on the
    /// server's inflate workers; nil: fed to the decoder's own stream.
    private let input: ParallelStreamInflater?
    private(set) var staging: ImportStaging
    /// The last DATA sequence received.
    private(set) var sequence: UInt64 = 0
    /// Held until the import ends: counts towards the server's limit.
    private let slot: ImportSlot

    /// - Parameter inflaters: the threads inflating the stream's gzip
    ///   members; nil inflates it as one stream on the decoding thread.
    init(store: Store, namespace: Namespace, mode: ImportMode, limits: SnapshotLimits, maxLists: Int,
         slot: ImportSlot, inflaters: InflateWorkers?) throws(ChecklistError) {
        self.mode = mode
        self.namespace = namespace
        self.slot = slot
        if let inflaters {
            (decoder, input) = SnapshotDecoder.streamed(name: Self.name, limits: limits, workers: inflaters,
                                                        rowBuilding: .leaves(of: store))
        } else {
            do {
                decoder = try SnapshotDecoder(name: Self.name, limits: limits)
            } catch {
                throw ChecklistError(.internalError, "\(error)")
            }
            input = nil
        }
        staging = store.makeImportStaging(enforcingLimits: true, maxLists: maxLists)
    }

    /// Names the stream in errors.
    static let name = "IMPORT stream"

    /// Uncompressed bytes decoded so far.
    var rawBytes: UInt64 { decoder.rawOffset }

    /// Decodes and stages the DATA chunk `sequence`.
    /// - Throws: `BAD_FIELD sequence` out of order; the snapshot's and the
    ///   lists' errors (see `wireError`).
    func receive(sequence: UInt64, bytes: [UInt8]) throws(ChecklistError) {
        guard sequence == self.sequence + 1 else {
            throw .badField("sequence", "expected DATA sequence \(self.sequence + 1), got \(sequence)")
        }
        self.sequence = sequence
        if let input {
            if try drain() { return }
            input.feed(bytes)
            _ = try drain()
            return
        }
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(ChecklistError) in
                var offset = 0
                while true {
                    if try drain() { return }
                    guard offset < raw.count else { return }
                    offset += decoder.feed(UnsafeRawBufferPointer(rebasing: raw[offset...]))
                }
            }
        }
        try result.get()
    }

    /// Ends the input: the trailer must have arrived and checked out.
    /// Returns the staged lists, ready for `Store.importLists`.
    func finish() throws(ChecklistError) -> ImportStaging {
        decoder.endInput()
        input?.endInput()
        guard try drain() else {
            throw ChecklistError(.internalError, "the snapshot decoder wants input after the end")
        }
        return staging
    }

    /// Hands decoded records to the staging until the decoder needs input
    /// (false) or reached the verified end (true).
    private func drain() throws(ChecklistError) -> Bool {
        do {
            return try decoder.restore(into: self) != nil
        } catch let error as SnapshotError {
            throw Self.wireError(error)
        } catch let error as ChecklistError {
            throw error
        } catch {
            throw ChecklistError(.internalError, "\(error)")
        }
    }

    // MARK: The decoder's records, staged

    func restoreHeader(_ header: SnapshotHeader) throws {}

    func restoreList(_ list: SnapshotList) throws {
        try staging.beginList(ImportStaging.ListHeader(namespace: namespace, sourceID: list.id, name: list.name, icon: list.icon,
                                                       revision: list.revision, nextItemID: list.nextItemID))
    }

    func restoreItem(_ item: Item, in list: ListID) throws {
        try staging.append(item)
    }

    func restoreItem(_ row: ImportedItems.View, in list: ListID) throws {
        try staging.append(row)
    }

    /// Rows built on the inflate workers (`SnapshotRowBuilding.leaves(of:)`).
    func restoreRows(_ rows: any Sendable, in list: ListID) throws {
        guard let batch = rows as? RowBatch else {
            throw ChecklistError(.internalError, "rows of type \(type(of: rows)), not the store's")
        }
        try staging.append(batch)
    }

    /// The exporting server's memory of keys: not this server's.
    func restoreIdempotency(_ client: SnapshotIdempotency) throws {}

    /// How a refused snapshot is reported on the wire: size bounds are
    /// `LIMIT_EXCEEDED data`, everything else `BAD_FIELD data`; the message
    /// starts with the snapshot error's name (Protocol/SNAPSHOT.md section 4)
    /// and gives the offset.
    static func wireError(_ error: SnapshotError) -> ChecklistError {
        switch error.code {
        case .decompressionLimit, .recordTooLarge:
            return ChecklistError(.limitExceeded, error.description, field: "data")
        default:
            return ChecklistError(.badField, error.description, field: "data")
        }
    }
}
