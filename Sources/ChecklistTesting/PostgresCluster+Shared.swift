import Glibc
import Synchronization

extension PostgresCluster {
    /// Whether this machine has PostgreSQL binaries: suites that need a
    /// cluster are disabled (reported as skipped, with the reason) when not.
    public static var binariesFound: Bool { findBinaries() != nil }

    private static let sharedCluster: Result<PostgresCluster, any Error> = {
        // synchronous_commit on: an acknowledged commit is on disk.
        let result = Result { try PostgresCluster(settings: ["synchronous_commit": "on"]) }
        if case .success = result { atexit { PostgresCluster.stopShared() } }
        return result
    }()

    private static let databaseCounter = Atomic<Int>(0)

    private static func stopShared() {
        if case .success(let cluster) = sharedCluster { cluster.stop() }
    }

    /// The one private cluster of this test process: started on first use,
    /// stopped when the process exits.
    public static func shared() throws -> PostgresCluster { try sharedCluster.get() }

    /// A fresh database on the shared cluster; its connection string.
    public static func freshSharedDatabase(prefix: String = "checklist_test") throws -> String {
        let n = databaseCounter.add(1, ordering: .relaxed).newValue
        return try shared().createDatabase("\(prefix)_\(getpid())_\(n)")
    }
}
