import ChecklistModel

/// Builds a list's rows from ITEM records on a snapshot reader's worker
/// thread (the store's leaves), so that the reading thread only files the
/// finished rows (`SnapshotRestoreSink.restoreRows`).
public protocol SnapshotRowBuilder: Sendable {
    /// What `take()` hands over: rows in the sink's own form.
    associatedtype Rows: Sendable
    /// Appends the next row of the current list; false when this builder
    /// does not take it (the stretch it is in is then read row by row on
    /// the reading thread).
    mutating func append(_ row: ImportedItems.View) -> Bool
    /// The rows appended since the last call; the builder starts anew.
    mutating func take() -> Rows
}

/// Decodes the records at the start of some inflated content on a
/// worker (`DecodedStretch.decode`); nil when there is none it takes.
typealias StretchDecoder = @Sendable (UnsafeRawBufferPointer) -> DecodedStretch?

/// How a sink's rows are built on the reader's workers: what a
/// `SnapshotRestoreSink` offers through `rowBuilding`.
public struct SnapshotRowBuilding: Sendable {
    /// Decodes the records at the start of some content on a worker.
    private let decode: @Sendable (UnsafeRawBufferPointer, SnapshotLimits) -> DecodedStretch?

    /// Each worker makes its builders with `make`.
    public init<Builder: SnapshotRowBuilder>(_ make: @escaping @Sendable () -> Builder) {
        decode = { bytes, limits in
            var builder = make()
            return DecodedStretch.decode(bytes, limits: limits, builder: &builder)
        }
    }

    /// The workers' decoder for a snapshot read within `limits`.
    func decoder(limits: SnapshotLimits) -> StretchDecoder {
        { [decode] bytes in decode(bytes, limits) }
    }
}
