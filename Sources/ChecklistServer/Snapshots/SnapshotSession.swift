import ChecklistModel
import ChecklistPersistence
import ChecklistStore
import ChecklistWire

/// The EXPORT and IMPORT requests of one connection (Protocol/SPEC.md
/// sections 6.16-6.17): part of its `ConnectionSession`, on the
/// connection's loop. At most one export and one import run per connection.
///
/// Both are pulled by the client, one request per chunk, so the server
/// holds at most about one chunk per connection however slow the client
/// is, and the connection's usual back-pressure (section 4.1) applies.
struct SnapshotSession {
    let transfers: SnapshotTransfers
    let store: Store
    let limits: Limits
    /// The running export and its chunk size.
    private var export: (cursor: ExportCursor, chunkBytes: Int)?
    private var importStream: ImportStream?

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

    /// Most lists one IMPORT may hold: the answer's renamed pairs (at most
    /// 20 bytes each) must fit in one frame.
    var maxImportLists: Int {
        min(Store.defaultMaxImportLists, max(1, (Int(limits.maxFrameBytes) - 64) / 20))
    }

    mutating func handle(_ request: Request, namespace: Namespace, requestID: UInt32,
                         into out: inout WireWriter, encoder: inout FrameEncoder) {
        do {
            switch request {
            case .export(let m):
                try handleExport(m.action, namespace: namespace, requestID: requestID, into: &out, encoder: &encoder)
            case .import(let m):
                let answer = try handleImport(m.action, namespace: namespace)
                encoder.append(answer, requestID: requestID, to: &out)
            default:
                throw ChecklistError(.internalError, "\(request.type) is not a snapshot request")
            }
        } catch let error as ChecklistError {
            encoder.append(ErrorMessage(error), requestID: requestID, to: &out)
        } catch {
            encoder.append(ErrorMessage(ChecklistError(.internalError, "\(error)")), requestID: requestID, to: &out)
        }
    }

    // MARK: EXPORT

    private mutating func handleExport(_ action: Export.Action, namespace: Namespace, requestID: UInt32,
                                       into out: inout WireWriter, encoder: inout FrameEncoder) throws {
        switch action {
        case .start(let asked, let lists):
            guard export == nil else {
                throw ChecklistError(.badState, "an export is already running on this connection: finish or CANCEL it first")
            }
            let (cut, _) = store.cut { () }
            let cursor = try ExportCursor(cut: cut, namespace: namespace, requested: lists, source: Self.exportSource)
            // At most the server's chunk size, and room in the frame for the other fields.
            var chunkBytes = min(transfers.configuration.exportChunkBytes, Int(limits.maxFrameBytes) - 64)
            if asked > 0 { chunkBytes = min(chunkBytes, Int(clamping: asked)) }
            export = (cursor, max(1, chunkBytes))
        case .next(let sequence):
            guard let running = export else { throw ChecklistError(.badState, "no export is running on this connection") }
            guard sequence == running.cursor.nextSequence else {
                throw ChecklistError.badField("sequence", "expected chunk \(running.cursor.nextSequence), got \(sequence)")
            }
        case .cancel:
            let sequence = export?.cursor.nextSequence ?? 0
            export = nil
            encoder.append(ExportChunk(sequence: sequence, status: .cancelled, listCount: 0, itemCount: 0,
                                       itemsWritten: 0, rawBytes: 0, data: []), requestID: requestID, to: &out)
            return
        }
        guard let (cursor, chunkBytes) = export else { return }
        // Gzip data does not compress: never spend zlib on it again.
        let compress = encoder.compress
        encoder.compress = false
        defer { encoder.compress = compress }
        do {
            let header = try cursor.nextChunk(maxBytes: chunkBytes) { header, data in
                encoder.append(type: .exportChunk, requestID: requestID, to: &out) { w in
                    ExportChunk.encode(header: header, data: data, into: &w)
                }
            }
            if header.status == .end { export = nil }
        } catch {
            export = nil
            throw ChecklistError(.internalError, "the export failed: \(error)")
        }
    }

    // MARK: IMPORT

    private mutating func handleImport(_ action: Import.Action, namespace: Namespace) throws(ChecklistError) -> ImportOK {
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
            importStream = try ImportStream(store: store, namespace: namespace, mode: mode == .replace ? .replace : .merge,
                                            limits: snapshotLimits, maxLists: maxImportLists, slot: slot)
            return ImportOK(status: .started, sequence: 0, rawBytes: 0, lists: 0, items: 0)
        case .data(let sequence, let bytes):
            let stream = try running()
            do {
                try stream.receive(sequence: sequence, bytes: bytes)
            } catch {
                // A bad chunk ends the import; nothing was applied.
                importStream = nil
                throw error
            }
            return ImportOK(status: .received, sequence: stream.sequence, rawBytes: stream.rawBytes,
                            lists: UInt64(stream.staging.listCount), items: UInt64(stream.staging.itemCount))
        case .end:
            let stream = try running()
            importStream = nil
            let staging = try stream.finish()
            let result = store.importLists(staging, mode: stream.mode, namespace: namespace)
            let renamed = result.lists.filter { $0.id != $0.sourceID }.map { ImportOK.Renamed(from: $0.sourceID, to: $0.id) }
            return ImportOK(status: .applied, sequence: stream.sequence, rawBytes: stream.rawBytes,
                            lists: UInt64(result.lists.count), items: result.itemCount,
                            deleted: UInt64(result.deleted.count), renamed: renamed)
        case .cancel:
            let sequence = importStream?.sequence ?? 0
            importStream = nil
            return ImportOK(status: .cancelled, sequence: sequence, rawBytes: 0, lists: 0, items: 0)
        }
    }

    private func running() throws(ChecklistError) -> ImportStream {
        guard let importStream else { throw ChecklistError(.badState, "no import is running on this connection") }
        return importStream
    }
}
