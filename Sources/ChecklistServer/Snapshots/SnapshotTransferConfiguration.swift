import ChecklistLog
import ChecklistSnapshot
import Glibc
import Synchronization

/// Bounds of EXPORT and IMPORT (Protocol/SPEC.md sections 6.16-6.17).
public struct SnapshotTransferConfiguration: Sendable {
    /// Largest EXPORT_CHUNK data this server sends (a client may ask for less).
    public var exportChunkBytes: Int = 1 << 20
    /// Most uncompressed bytes one IMPORT may inflate to (`--max-import-bytes`);
    /// the staged lists take about 1.7 times this in memory until END.
    public var maxImportBytes: UInt64 = 1 << 30
    /// Most uncompressed bytes per compressed byte of an IMPORT, checked
    /// once `importRatioGraceBytes` were inflated (a decompression bomb).
    public var maxImportRatio: UInt64 = 200
    public var importRatioGraceBytes: UInt64 = 16 << 20
    /// IMPORTs being received at once, server-wide; one more is refused
    /// with `OVERLOADED` so that staged imports cannot exhaust memory.
    public var maxConcurrentImports: Int = 2
    /// Threads that make export chunks and decode and apply imports, off the
    /// event loops (`--transfer-threads`): at most this many chunks are
    /// worked on at once, server-wide; the others wait their turn.
    public var workerThreads: Int = 2
    /// Threads that inflate the gzip members of IMPORT streams, decode
    /// their records and build the rows, shared by every import
    /// (`--import-inflate-threads`; default one per core, at most 16). 0
    /// inflates and decodes each import as one stream on the thread that
    /// stages it.
    public var importInflateThreads: Int = min(16, max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))))

    public init() {}
}

/// The server-wide side of snapshot transfers: the configuration, the
/// count of imports being received and the worker threads that do the
/// chunks' heavy work. Shared by every connection.
final class SnapshotTransfers: Sendable {
    let configuration: SnapshotTransferConfiguration
    let workers: TransferWorkers
    /// Inflate the imports' gzip members; nil: each import is one stream.
    let inflaters: InflateWorkers?
    private let importsRunning = Atomic<Int>(0)
    /// Where the end of each import is told (debug).
    private let log: ServerLog?

    init(configuration: SnapshotTransferConfiguration, log: ServerLog? = nil) {
        self.configuration = configuration
        self.log = log
        workers = TransferWorkers(threads: configuration.workerThreads)
        inflaters = configuration.importInflateThreads > 0 ? InflateWorkers(threads: configuration.importInflateThreads) : nil
    }

    /// Takes one of the import slots, or returns nil when all are taken.
    func acquireImportSlot() -> ImportSlot? {
        let limit = configuration.maxConcurrentImports
        var current = importsRunning.load(ordering: .relaxed)
        while current < limit {
            let (exchanged, original) = importsRunning.compareExchange(expected: current, desired: current + 1,
                                                                         ordering: .acquiringAndReleasing)
            if exchanged { return ImportSlot(owner: self) }
            current = original
        }
        return nil
    }

    fileprivate func releaseImportSlot() {
        let running = importsRunning.subtract(1, ordering: .acquiringAndReleasing).newValue
        log?.debug("import_slot_released", ["importsRunning": running, "maxImports": configuration.maxConcurrentImports])
    }
}

/// One taken import slot, given back when the import ends (applied,
/// cancelled, failed, or its connection closed).
final class ImportSlot {
    private let owner: SnapshotTransfers

    fileprivate init(owner: SnapshotTransfers) {
        self.owner = owner
    }

    deinit { owner.releaseImportSlot() }
}
