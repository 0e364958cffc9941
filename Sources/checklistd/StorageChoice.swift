import ChecklistStorage
import ChecklistPostgres
import ChecklistServer
import Foundation

/// Where `checklistd` keeps its data: the data directory (the default) or
/// PostgreSQL (`--postgres`, `CHECKLIST_POSTGRES`), and how a start that
/// cannot reach PostgreSQL ends.
enum StorageChoice {
    /// The exit status when PostgreSQL cannot be reached (or refuses the
    /// login) at start: 3, apart from 1 (other failures) and 2 (usage).
    static let unreachableExitStatus: Int32 = 3

    /// The opener the options choose.
    static func opener(_ options: Options) -> StorageOpener {
        if let conninfo = options.postgres {
            var settings = options.postgresSettings
            settings.retainChangesPerList = options.configuration.liveSync.retainChangesPerList
            settings.cache = ListCache.Configuration(maxBytes: options.cacheBytes ?? ListCache.Configuration.defaultMaxBytes)
            return .postgres(conninfo, settings: settings)
        }
        return .dataDirectory(options.configuration.dataDirectory, fsync: options.fsync,
                              snapshots: options.snapshots)
    }

    /// The exit status and message for a start that failed with `error`,
    /// when that is PostgreSQL being unreachable; nil otherwise.
    static func unreachable(_ error: any Error) -> (status: Int32, message: String)? {
        guard let error = error as? PostgresError, error.code == .connectionFailed else { return nil }
        return (unreachableExitStatus, "cannot reach PostgreSQL: \(error.message)")
    }
}
