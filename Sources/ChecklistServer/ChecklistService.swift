import ChecklistEventLoop
import ChecklistModel
import ChecklistSocket
import ChecklistStore
import ChecklistStorage
import ChecklistLog

/// What a whole service is started with (`ChecklistService`).
public struct ServiceOptions: Sendable {
    public var configuration: ServerConfiguration
    /// Where the data is kept; nil keeps it in memory only (tests).
    public var storage: StorageOpener?
    /// Fill an empty store with the apps' demo lists (`--seed-demo`); on
    /// PostgreSQL only a database that never held a list.
    public var seedDemo: Bool
    /// Told when the storage fails for good (after `event=log_failed` is
    /// logged); `checklistd` exits.
    public var onStorageFailure: StorageOpener.FailureHandler

    public init(configuration: ServerConfiguration, storage: StorageOpener?, seedDemo: Bool = false,
                onStorageFailure: @escaping StorageOpener.FailureHandler = { _ in }) {
        self.configuration = configuration
        self.storage = storage
        self.seedDemo = seedDemo
        self.onStorageFailure = onStorageFailure
    }
}

/// A running service: the store with its stored state loaded, its storage,
/// live sync and the server, wired in the one order that is right. Used by
/// `checklistd` and by the in-process tests.
public final class ChecklistService: Sendable {
    public let server: ChecklistServer
    /// Where the data is kept, unless in memory only.
    public let storage: (any ServerStorage)?
    public let liveSync: SubscriptionHub
    public var store: Store { server.store }

    /// Opens the storage (loading the stored state), then starts serving:
    /// listening, `event=start` and the storage's start lines logged, its
    /// background work running, when it returns.
    public init(_ options: ServiceOptions) throws {
        let configuration = options.configuration
        let liveSync = SubscriptionHub(configuration: configuration.liveSync,
                                       maxFrameBytes: configuration.limits.maxFrameBytes)
        let store: Store
        if let opener = options.storage {
            let fatal = ServerLog(level: configuration.logLevel)
            let onFailure = options.onStorageFailure
            (store, storage) = try opener.open(configuration.limits, liveSync) { error in
                // Durability can no longer be promised: whoever started the
                // service stops it rather than acknowledge what may not survive.
                fatal.error("log_failed", ["error": "\(error)"])
                onFailure(error)
            }
        } else {
            store = Store(limits: configuration.limits, onCommitGroup: { changes in liveSync.publish(changes) },
                          onCommitEach: { changes in liveSync.publish(changes) })
            storage = nil
        }
        self.liveSync = liveSync
        do {
            // On PostgreSQL, once per database: not again after its lists were deleted.
            if options.seedDemo, (storage as? PostgresStorage)?.load.everHeldLists != true { try DemoData.seedIfEmpty(store) }
            server = try ChecklistServer(configuration: configuration, store: store, liveSync: liveSync, storage: storage)
        } catch {
            try? storage?.close()
            throw error
        }
        server.logStart()
        storage?.startUpkeep(log: server.log)
    }

    /// Stops the service: the server first (every connection gets what it
    /// is owed, then the goodbye), then the storage (its background work
    /// finishes, what was appended is made durable). Logs `event=stopping`
    /// and `event=stop`. Blocks; call it off the event loops.
    @discardableResult
    public func shutdown(timeout: Duration = .seconds(10)) throws -> TCPServer.ShutdownResult {
        server.log.info("stopping", ["connections": server.metrics.report().connectionsOpen])
        let result = server.shutdown(timeout: timeout)
        try storage?.close()
        server.logStop(result)
        return result
    }
}
