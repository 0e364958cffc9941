import ChecklistModel
import ChecklistPersistence
import ChecklistStore
import Foundation

/// How a service opens its storage (`ServerStorage`): which one, and where.
/// It makes the store, loads the stored state into it and wires the store's
/// commits to the storage and then to live sync (`StorageOpener.openStore`).
public struct StorageOpener: Sendable {
    /// Called once, from the storage's thread, when it can no longer keep
    /// its promises (the log cannot write): the server should stop.
    public typealias FailureHandler = @Sendable (any Error) -> Void

    package let open: @Sendable (_ limits: Limits, _ liveSync: (any LiveSyncFeed)?, _ onFailure: @escaping FailureHandler) throws
        -> (Store, any ServerStorage)

    /// An opener for any storage: `make` gets the new, empty store, where the
    /// changes it replays go (the change feed), and the failure handler.
    public init<S: ServerStorage>(_ make: @escaping @Sendable (_ store: Store, _ replayed: (Change) -> Void,
                                                               _ onFailure: @escaping FailureHandler) throws -> S) {
        open = { limits, liveSync, onFailure in
            try StorageOpener.openStore(limits: limits, liveSync: liveSync) { store, replayed in
                try make(store, replayed, onFailure)
            }
        }
    }

    /// The local data directory at `path` (created if missing): snapshots and
    /// a write-ahead log fsynced as `fsync` says, a snapshot written in the
    /// background when `snapshots` says.
    public static func dataDirectory(_ path: String, fsync: FsyncPolicy, snapshots: SnapshotPolicy = SnapshotPolicy()) -> StorageOpener {
        dataDirectory(path, fsync: fsync, snapshots: snapshots, syncFile: WriteAheadLog.Options().syncFile)
    }

    /// As above, with the log's fsync replaced (tests hold it to keep
    /// answers waiting for durability).
    static func dataDirectory(_ path: String, fsync: FsyncPolicy, snapshots: SnapshotPolicy = SnapshotPolicy(),
                              syncFile: @escaping @Sendable (Int32) -> Int32) -> StorageOpener {
        StorageOpener { store, replayed, onFailure in
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            return try DataDirectoryStorage(path: path, policy: fsync, snapshots: snapshots, store: store,
                                            onReplayed: replayed, syncFile: syncFile) { onFailure($0) }
        }
    }

    /// PostgreSQL at `conninfo` (a libpq connection string or a
    /// `postgresql://` URI): the schema created or migrated, every stored
    /// list loaded, commits group-committed by one committer thread
    /// (`PostgresStorage`), checkpoints and trimming in the background. With
    /// `settings.cache`, only the lists' summaries are loaded at start and
    /// rows on first use, within the cache's budget.
    public static func postgres(_ conninfo: String, settings: PostgresSettings = PostgresSettings()) -> StorageOpener {
        guard settings.cache != nil else {
            return StorageOpener { store, replayed, _ in
                try PostgresStorage(conninfo: conninfo, settings: settings, store: store, onReplayed: replayed)
            }
        }
        return StorageOpener(open: { limits, liveSync, _ in
            try StorageOpener.openStore(limits: limits, liveSync: liveSync) { store, _ in
                try PostgresStorage(conninfo: conninfo, settings: settings, store: store, retain: { liveSync?.retainReplayed($0) })
            }
        })
    }

    /// A new store whose stored state `open` loads into it (handing the
    /// changes it replays to `liveSync`'s retained feed), and whose every
    /// commit then goes, in commit order, first to the storage and then to
    /// `liveSync`: the wiring every store with a storage needs, server or
    /// not (`checklistd export|import`).
    public static func openStore<S: ServerStorage>(limits: Limits = .default, liveSync: (any LiveSyncFeed)? = nil,
                                                   storage open: (_ store: Store, _ replayed: (Change) -> Void) throws -> S)
        throws -> (Store, S) {
        let fanout = CommitFanout()
        let store = Store(limits: limits, onCommitGroup: fanout.onCommitGroup, onCommitEach: fanout.onCommitEach)
        let storage = try open(store) { change in liveSync?.retainReplayed(change) }
        fanout.add(storage.append, each: storage.appendEach)
        // The storage's thread gives the memory back (`giveBackIfDue`).
        fanout.add(FreeMemory.noteCommitted, each: FreeMemory.noteCommitted)
        if let liveSync, let postgres = storage as? PostgresStorage {
            postgres.attach(liveSync: liveSync)  // publishes what is committed, from its own threads
        } else if let liveSync {
            let publish: CommitFanout.Consumer = { changes in liveSync.publishCommitted(changes) }
            fanout.add(publish, each: publish)  // a batch's commits at once
        }
        return (store, storage)
    }

    private init(open: @escaping @Sendable (_ limits: Limits, _ liveSync: (any LiveSyncFeed)?,
                                            _ onFailure: @escaping FailureHandler) throws -> (Store, any ServerStorage)) {
        self.open = open
    }
}
