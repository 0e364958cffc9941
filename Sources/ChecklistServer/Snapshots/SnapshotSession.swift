import ChecklistStorage
import ChecklistModel
import ChecklistSnapshot
import ChecklistStore
import ChecklistWire

/// The EXPORT and IMPORT requests of one connection (Protocol/SPEC.md
/// sections 6.16-6.17): part of its `ProtocolSession`, on the
/// connection's loop. At most one export and one import run per connection.
///
/// Both are pulled by the client, one request per chunk, so the server
/// holds at most about one chunk per connection however slow the client
/// is, and the connection's usual back-pressure (section 4.1) applies.
///
/// Requests are checked here, on the loop; the heavy part of a chunk
/// (compressing, decoding, applying) is handed back as a `SnapshotWork`
/// for a transfer worker, and its outcome comes back to `complete`. The
/// export's cursor and the import's stream are with the worker meanwhile
/// (`Exclusive`); the connection sends this session no request until then.
struct SnapshotSession {
    let transfers: SnapshotTransfers
    let store: Store
    let limits: Limits
    /// The running export and its chunk size.
    private var export: (cursor: Exclusive<ExportCursor>, chunkBytes: Int)?
    /// The END chunk (without its data) of the connection's last export,
    /// until the next START or CANCEL: a NEXT past it, which a client
    /// pipelined, is answered with another END chunk, not an error
    /// (Protocol/SPEC.md section 6.16).
    private var ended: ExportChunk?
    private var importStream: Exclusive<ImportStream>?

    init(transfers: SnapshotTransfers, store: Store, limits: Limits) {
        self.transfers = transfers
        self.store = store
        self.limits = limits
    }

    /// Whether this component answers `request`.
    static func handles(_ request: Request) -> Bool {
        switch request {
        case .export, .import: return true
        default: return false
        }
    }

    /// The source written in exported snapshots' headers.
    static let exportSource = "checklistd/1.0 EXPORT"

    /// Most lists one IMPORT may hold: the answer's renamed pairs must fit
    /// in one frame.
    var maxImportLists: Int {
        min(Store.defaultMaxImportLists, max(1, ImportOK.maxRenamedPairs(maxFrameBytes: limits.maxFrameBytes)))
    }

    /// Answers `request` into `answers`, or returns the work that will make
    /// its answer (to be run off the loop, then given to `complete`).
    mutating func handle(_ request: Request, namespace: Namespace, requestID: UInt32,
                         into answers: inout AnswerWriter) -> SnapshotWork? {
        do {
            switch request {
            case .export(let m):
                return try handleExport(m.action, namespace: namespace, requestID: requestID, into: &answers)
            case .import(let m):
                switch try handleImport(m.action, namespace: namespace, requestID: requestID) {
                case .answer(let answer):
                    answers.append(answer, requestID: requestID)
                    return nil
                case .work(let work):
                    return work
                }
            default:
                throw ChecklistError(.internalError, "\(request.type) is not a snapshot request")
            }
        } catch let error as ChecklistError {
            answers.fail(error, requestID: requestID)
        } catch {
            answers.fail(ChecklistError(.internalError, "\(error)"), requestID: requestID)
        }
        return nil
    }

    /// Writes the answer `outcome` of `work` into `answers` and updates the
    /// running transfers: an export ends with its END chunk or a failure,
    /// an import with a failed DATA.
    mutating func complete(_ work: SnapshotWork, _ outcome: SnapshotWork.Outcome, into answers: inout AnswerWriter) {
        switch outcome {
        case .success(.exportChunk(let frame, let end)):
            if let end {
                export = nil
                ended = end
            }
            answers.appendEncoded(frame, type: .exportChunk, requestID: work.requestID)
        case .success(.importOK(let answer)):
            answers.append(answer, requestID: work.requestID)
        case .failure(let error):
            switch work.kind {
            case .exportChunk: export = nil
            case .importData: importStream = nil  // a bad chunk ends the import; nothing was applied
            case .importEnd: break  // already over
            }
            answers.fail(error, requestID: work.requestID)
        }
    }

    /// The connection closed: drops the running export and import (the
    /// import's place is freed once no worker holds its stream either).
    mutating func endTransfers() {
        export = nil
        ended = nil
        importStream = nil
    }

    // MARK: EXPORT

    private mutating func handleExport(_ action: Export.Action, namespace: Namespace, requestID: UInt32,
                                       into answers: inout AnswerWriter) throws -> SnapshotWork? {
        switch action {
        case .start(let asked, let lists):
            guard export == nil else {
                throw ChecklistError(.badState, "an export is already running on this connection: finish or CANCEL it first")
            }
            let (cut, _) = store.cut { () }
            let cursor = try ExportCursor(cut: cut, namespace: namespace, requested: lists, source: Self.exportSource,
                                          clientKeys: answers.sendsClientKeys)
            // At most the server's chunk size, and room in the frame for the other fields.
            var chunkBytes = min(transfers.configuration.exportChunkBytes, ExportChunk.maxDataBytes(maxFrameBytes: limits.maxFrameBytes))
            if asked > 0 { chunkBytes = min(chunkBytes, Int(clamping: asked)) }
            export = (Exclusive(cursor), max(1, chunkBytes))
            ended = nil
        case .next(let sequence):
            guard let running = export else {
                guard let ended, sequence > ended.sequence else {
                    throw ChecklistError(.badState, "no export is running on this connection")
                }
                // Pipelined past the last chunk: the export is complete, say so again.
                answers.append(ExportChunk(sequence: sequence, status: .end, listCount: ended.listCount,
                                           itemCount: ended.itemCount, itemsWritten: ended.itemsWritten,
                                           rawBytes: ended.rawBytes, data: []), requestID: requestID)
                return nil
            }
            let expected = running.cursor.withValue { $0.nextSequence }
            guard sequence == expected else {
                throw ChecklistError.badField("sequence", "expected chunk \(expected), got \(sequence)")
            }
        case .cancel:
            let sequence = export?.cursor.withValue { $0.nextSequence } ?? 0
            export = nil
            ended = nil
            answers.append(ExportChunk(sequence: sequence, status: .cancelled, listCount: 0, itemCount: 0,
                                       itemsWritten: 0, rawBytes: 0, data: []), requestID: requestID)
            return nil
        }
        guard let (cursor, chunkBytes) = export else { return nil }
        return SnapshotWork(kind: .exportChunk, requestID: requestID) {
            Self.nextChunk(of: cursor, maxBytes: chunkBytes, requestID: requestID)
        }
    }

    /// Makes the export's next chunk and encodes its whole EXPORT_CHUNK
    /// frame. Runs on a transfer worker.
    private static func nextChunk(of cursor: Exclusive<ExportCursor>, maxBytes: Int, requestID: UInt32) -> SnapshotWork.Outcome {
        cursor.withValue { cursor in
            var frame = WireWriter(capacity: maxBytes + 64)
            // Gzip data does not compress: never spend zlib on it again.
            var encoder = FrameEncoder(compress: false)
            do {
                let header = try cursor.nextChunk(maxBytes: maxBytes) { header, data in
                    encoder.append(type: .exportChunk, requestID: requestID, to: &frame) { w in
                        ExportChunk.encode(header: header, data: data, into: &w)
                    }
                }
                // The cursor's header carries no data: what a NEXT past the END is answered from.
                return .success(.exportChunk(frame: frame.bytes, end: header.status == .end ? header : nil))
            } catch {
                return .failure(ChecklistError(.internalError, "the export failed: \(error)"))
            }
        }
    }

    // MARK: IMPORT

    /// An IMPORT's answer now, or the work that will make it.
    private enum ImportStep {
        case answer(ImportOK)
        case work(SnapshotWork)
    }

    private mutating func handleImport(_ action: Import.Action, namespace: Namespace,
                                       requestID: UInt32) throws(ChecklistError) -> ImportStep {
        switch action {
        case .begin(let mode):
            guard importStream == nil else {
                throw ChecklistError(.badState, "an import is already running on this connection: END or CANCEL it first")
            }
            guard let slot = transfers.acquireImportSlot() else {
                throw ChecklistError(.overloaded, "the server is receiving \(transfers.configuration.maxConcurrentImports) imports already; try again later")
            }
            let config = transfers.configuration
            let snapshotLimits = SnapshotLimits(maxRecordBytes: max(64 << 10, 3 * Int(limits.maxTextBytes) + 1024),
                                                maxRawBytes: config.maxImportBytes, maxRatio: config.maxImportRatio,
                                                ratioGraceBytes: config.importRatioGraceBytes)
            let stream = try ImportStream(store: store, namespace: namespace, mode: mode == .replace ? .replace : .merge,
                                          limits: snapshotLimits, maxLists: maxImportLists, slot: slot,
                                          inflaters: transfers.inflaters)
            importStream = Exclusive(stream)
            return .answer(ImportOK(status: .started, sequence: 0, rawBytes: 0, lists: 0, items: 0))
        case .data(let sequence, let bytes):
            let stream = try running()
            return .work(SnapshotWork(kind: .importData, requestID: requestID) {
                Self.receive(sequence: sequence, bytes: bytes, into: stream)
            })
        case .end:
            let stream = try running()
            importStream = nil
            let store = self.store
            return .work(SnapshotWork(kind: .importEnd, requestID: requestID) {
                Self.apply(stream, to: store, namespace: namespace)
            })
        case .cancel:
            let sequence = importStream?.withValue { $0.sequence } ?? 0
            importStream = nil
            return .answer(ImportOK(status: .cancelled, sequence: sequence, rawBytes: 0, lists: 0, items: 0))
        }
    }

    private func running() throws(ChecklistError) -> Exclusive<ImportStream> {
        guard let importStream else { throw ChecklistError(.badState, "no import is running on this connection") }
        return importStream
    }

    /// Decodes and stages DATA chunk `sequence`. Runs on a transfer worker.
    private static func receive(sequence: UInt64, bytes: [UInt8], into stream: Exclusive<ImportStream>) -> SnapshotWork.Outcome {
        stream.withValue { stream in
            do throws(ChecklistError) {
                try stream.receive(sequence: sequence, bytes: bytes)
            } catch {
                return .failure(error)
            }
            return .success(.importOK(ImportOK(status: .received, sequence: stream.sequence, rawBytes: stream.rawBytes,
                                               lists: UInt64(stream.staging.listCount),
                                               items: UInt64(stream.staging.itemCount))))
        }
    }

    /// END: checks the snapshot's end and applies its lists at once. Runs
    /// on a transfer worker; the import's place is freed when it returns.
    private static func apply(_ stream: Exclusive<ImportStream>, to store: Store, namespace: Namespace) -> SnapshotWork.Outcome {
        stream.withValue { stream in
            let staging: ImportStaging
            do throws(ChecklistError) {
                staging = try stream.finish()
            } catch {
                return .failure(error)
            }
            let result: ImportResult
            do throws(ChecklistError) {
                result = try store.importLists(staging, mode: stream.mode, namespace: namespace)
            } catch {
                return .failure(error)
            }
            FreeMemory.giveBack()
            let renamed = result.lists.filter { $0.id != $0.sourceID }.map { ImportOK.Renamed(from: $0.sourceID, to: $0.id) }
            return .success(.importOK(ImportOK(status: .applied, sequence: stream.sequence, rawBytes: stream.rawBytes,
                                               lists: UInt64(result.lists.count), items: result.itemCount,
                                               deleted: UInt64(result.deleted.count), renamed: renamed)))
        }
    }
}
