import ChecklistPostgres
import Foundation
import Synchronization
import Testing

@Suite(.enabled(if: TestCluster.binariesFound, TestCluster.skipReason), .timeLimit(.minutes(2)))
struct SchemaMigrationTests {
    @Test func freshDatabaseGetsEveryStep() throws {
        let connection = try PostgresConnection(conninfo: try TestCluster.freshDatabase())
        let report = try SchemaMigration.migrate(connection)
        #expect(report.foundVersion == 0)
        #expect(report.version == SchemaStep.latestVersion)
        #expect(report.applied == SchemaStep.all.map(\.version))
        for table in ["lists", "namespaces", "list_checkpoints", "changes", "idempotency_answers", "idempotency_clients"] {
            let exists = try connection.execute("SELECT to_regclass($1) IS NOT NULL", [.text(table)])
            #expect(try exists.bool(0, 0), "table \(table)")
        }
    }

    @Test func rerunChangesNothing() throws {
        let connection = try PostgresConnection(conninfo: try TestCluster.freshDatabase())
        try SchemaMigration.migrate(connection)
        let again = try SchemaMigration.migrate(connection)
        #expect(again.applied.isEmpty)
        #expect(again.foundVersion == SchemaStep.latestVersion)
        let rows = try connection.execute("SELECT count(*) FROM checklist_schema_version")
        #expect(try rows.int64(0, 0) == Int64(SchemaStep.all.count))
    }

    @Test func newerSchemaIsRefusedNamingBothVersions() throws {
        let connection = try PostgresConnection(conninfo: try TestCluster.freshDatabase())
        try SchemaMigration.migrate(connection)
        try connection.execute("INSERT INTO checklist_schema_version (version, description) VALUES (99, 'from the future')")
        let error = #expect(throws: PostgresError.self) { try SchemaMigration.migrate(connection) }
        #expect(error?.code == .schemaTooNew)
        #expect(error?.message.contains("version 99") == true)
        #expect(error?.message.contains("version \(SchemaStep.latestVersion) this checklistd knows") == true)
    }

    @Test func aFailingStepKeepsNothingOfItself() throws {
        let connection = try PostgresConnection(conninfo: try TestCluster.freshDatabase())
        let broken = SchemaStep(version: SchemaStep.latestVersion + 1, description: "half a step", sql: """
            CREATE TABLE half_done (id bigint);
            SELECT no_such_function();
            """)
        #expect(throws: PostgresError.self) { try SchemaMigration.migrate(connection, steps: SchemaStep.all + [broken]) }
        #expect(try SchemaMigration.recordedVersion(connection) == SchemaStep.latestVersion)
        let table = try connection.execute("SELECT to_regclass('half_done') IS NULL")
        #expect(try table.bool(0, 0))
    }

    /// A database of version 1 with changes stored: version 2 fills
    /// `lists.change_bytes` with the bodies after each list's checkpoint.
    @Test func version2CountsTheChangesAlreadyStored() throws {
        let connection = try PostgresConnection(conninfo: try TestCluster.freshDatabase())
        try SchemaMigration.migrate(connection, steps: Array(SchemaStep.all.prefix(1)))
        try connection.executeScript("""
            INSERT INTO namespaces (name) VALUES ('default');
            INSERT INTO lists (id, namespace, name, icon, item_count, unchecked_count, revision, next_item_id, checkpoint_revision)
            VALUES (1, 'default', 'a', 'a', 0, 0, 3, 1, 1), (2, 'default', 'b', 'b', 0, 0, 1, 1, 1);
            INSERT INTO changes (list_id, revision, namespace, kind, body)
            VALUES (1, 1, 'default', 1, '\\x0102'), (1, 2, 'default', 1, '\\x010203'), (1, 3, 'default', 1, '\\x01020304'),
                   (2, 1, 'default', 1, '\\x01');
            """)
        let report = try SchemaMigration.migrate(connection, steps: Array(SchemaStep.all.prefix(2)))
        #expect(report.applied == [2])
        let rows = try connection.execute("SELECT id, change_bytes FROM lists ORDER BY id")
        // List 1: revisions 2 and 3 are after its checkpoint (3 + 4 bytes); list 2 has none.
        #expect(try (0..<rows.rowCount).map { try rows.int64($0, 1) } == [7, 0])
    }

    /// A database of version 2 gets `lists.row_bytes` (NULL: not known,
    /// counted as 0 by a quota) and the quota check's function.
    @Test func version3AddsRowBytesAndTheQuotaFunction() throws {
        let connection = try PostgresConnection(conninfo: try TestCluster.freshDatabase())
        try SchemaMigration.migrate(connection, steps: Array(SchemaStep.all.prefix(2)))
        try connection.executeScript("""
            INSERT INTO namespaces (name) VALUES ('default');
            INSERT INTO lists (id, namespace, name, icon, item_count, unchecked_count, revision, next_item_id)
            VALUES (1, 'default', 'a', 'a', 2, 0, 3, 3);
            """)
        #expect(try SchemaMigration.migrate(connection).applied == [3])
        #expect(try connection.execute("SELECT row_bytes IS NULL FROM lists").bool(0, 0))
        let error = #expect(throws: PostgresError.self) {
            try connection.execute("SELECT checklist_quota_exceeded(1, 'items', 6, 5)")
        }
        #expect(error?.sqlState == "CKQ01" && error?.message.contains("QUOTA 1 items 6 5") == true)
    }

    /// Two starters wait on the advisory lock a third connection holds,
    /// then race for it: exactly one of them runs each step.
    @Test func twoConcurrentStartersMigrateOnce() throws {
        let conninfo = try TestCluster.freshDatabase()
        let holder = try PostgresConnection(conninfo: conninfo)
        try holder.executeScript("BEGIN")
        try holder.execute("SELECT pg_advisory_xact_lock($1)", [.int64(SchemaMigration.lockKey)])
        let applied = Mutex<[[Int]]>([])
        let failures = Mutex<[String]>([])
        let finished = DispatchSemaphore(value: 0)
        let threads = (0..<2).map { _ in
            Thread {
                do {
                    let connection = try PostgresConnection(conninfo: conninfo)
                    let report = try SchemaMigration.migrate(connection)
                    applied.withLock { $0.append(report.applied) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
                finished.signal()
            }
        }
        threads.forEach { $0.start() }
        // Both must be waiting on the lock before it is released.
        var waiting: Int64 = 0
        _ = try pollDatabase(every: .milliseconds(10)) {
            waiting = try holder.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").int64(0, 0)
            return waiting >= 2
        }
        #expect(waiting == 2)
        try holder.executeScript("COMMIT")
        for _ in 0..<2 { #expect(finished.wait(timeout: .now() + 30) == .success) }
        #expect(failures.withLock { $0 } == [])
        let all = applied.withLock { $0 }
        #expect(all.count == 2)
        #expect(all.flatMap { $0 }.sorted() == SchemaStep.all.map(\.version))
    }
}
