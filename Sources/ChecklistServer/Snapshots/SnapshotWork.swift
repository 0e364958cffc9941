import ChecklistModel
import ChecklistWire

/// The heavy part of one EXPORT or IMPORT request, left by
/// `SnapshotSession.handle` for a transfer worker: making an export chunk,
/// decoding an import chunk, or checking and applying an import at END.
///
/// `run` is called once, on a worker thread; what it returns goes back to
/// the connection's loop, where `SnapshotSession.complete` writes the
/// answer and updates the session. Until then the connection dispatches
/// none of its later requests, so answers keep request order.
struct SnapshotWork: Sendable {
    /// Which request the work answers (the session's state after it
    /// depends on it).
    enum Kind: Sendable, Equatable {
        /// EXPORT START or NEXT: the next chunk.
        case exportChunk
        /// IMPORT DATA: one chunk decoded and staged.
        case importData
        /// IMPORT END: the snapshot checked and applied.
        case importEnd
    }

    /// What the work made.
    enum Answer: Sendable {
        /// A whole EXPORT_CHUNK frame, encoded; `end`, its fields without
        /// the data, when its status is END.
        case exportChunk(frame: [UInt8], end: ExportChunk?)
        /// The IMPORT_OK to send.
        case importOK(ImportOK)
    }

    /// The answer, or the error that answers the request instead.
    typealias Outcome = Result<Answer, ChecklistError>

    let kind: Kind
    let requestID: UInt32
    let run: @Sendable () -> Outcome
}
