/// Creates or upgrades a database's schema at start (docs/POSTGRES.md,
/// "Schema versions").
///
/// Each step runs in its own transaction that first takes a transaction-level
/// advisory lock, then reads the recorded version: so of several nodes
/// starting at once, one runs a step and the others, waiting on the lock,
/// find it recorded and skip it. A database whose recorded version is above
/// what this binary knows is refused before anything is changed.
public enum SchemaMigration {
    /// What `migrate` found and did.
    public struct Report: Hashable, Sendable {
        /// The version recorded before this call (0: a fresh database).
        public var foundVersion: Int
        /// The version now recorded.
        public var version: Int
        /// Steps this call ran (others may have run some meanwhile).
        public var applied: [Int]
    }

    /// The key of the advisory lock every migrating transaction takes
    /// (`pg_advisory_xact_lock`): ASCII "cklsschm".
    public static let lockKey: Int64 = 0x636B_6C73_7363_686D

    /// Brings the schema up to `steps.last.version`.
    ///
    /// - Throws: `SCHEMA_TOO_NEW` naming both versions if the database
    ///   records a version above the newest of `steps`; a statement error
    ///   (nothing of the failing step is kept).
    @discardableResult
    public static func migrate(_ connection: PostgresConnection,
                               steps: [SchemaStep] = SchemaStep.all) throws -> Report {
        let known = steps.last?.version ?? 0
        var found: Int?
        var current = 0
        var applied: [Int] = []
        for step in steps {
            current = try connection.transaction {
                try connection.execute("SELECT pg_advisory_xact_lock($1)", [.int64(lockKey)])
                try connection.executeScript("""
                    CREATE TABLE IF NOT EXISTS checklist_schema_version (
                        version     integer PRIMARY KEY,
                        description text NOT NULL,
                        applied_at  timestamptz NOT NULL DEFAULT now()
                    )
                    """)
                let recorded = try recordedVersion(connection)
                if found == nil { found = recorded }
                guard recorded <= known else {
                    throw PostgresError(.schemaTooNew, "the database's schema is version \(recorded), newer than version \(known) this checklistd knows: run a newer checklistd")
                }
                guard recorded < step.version else { return recorded }
                try connection.executeScript(step.sql)
                try connection.execute("INSERT INTO checklist_schema_version (version, description) VALUES ($1, $2)",
                                       [.int32(Int32(step.version)), .text(step.description)])
                applied.append(step.version)
                return step.version
            }
        }
        return Report(foundVersion: found ?? 0, version: current, applied: applied)
    }

    /// The highest version recorded, 0 for none (or no version table).
    public static func recordedVersion(_ connection: PostgresConnection) throws(PostgresError) -> Int {
        let exists = try connection.execute("SELECT to_regclass('checklist_schema_version') IS NOT NULL")
        guard try exists.bool(0, 0) else { return 0 }
        let result = try connection.execute("SELECT coalesce(max(version), 0)::bigint FROM checklist_schema_version")
        return Int(try result.int64(0, 0))
    }
}
