@testable import ChecklistPostgres
import Testing

/// `PostgresConnection.run(_:)`: several statements in one flight.
@Suite(.enabled(if: TestCluster.binariesFound, TestCluster.skipReason), .timeLimit(.minutes(2)))
struct PipelineTests {
    static let double = PostgresStatement(name: "test_pipeline_double", sql: "SELECT $1::int8 * 2")

    @Test func severalStatementsInOneFlightAnswerInOrder() throws {
        let connection = try PostgresConnection(conninfo: try TestCluster.cluster().conninfo())
        var pipeline = PostgresPipeline()
        pipeline.append("SELECT $1::int8 + 1", [.int64(41)])
        pipeline.append(Self.double, [.int64(21)])
        pipeline.append(Self.double, [.int64(50)])
        pipeline.append("SELECT $1::text", [.text("é")])
        let results = try connection.run(pipeline).get()
        #expect(results.count == 4)
        #expect(try results[0].int64(0, 0) == 42)
        #expect(try results[1].int64(0, 0) == 42)
        #expect(try results[2].int64(0, 0) == 100)
        #expect(try results[3].string(0, 0) == "é")
        // Prepared in the flight, once: `execute` runs it by name.
        #expect(connection.prepared.contains(Self.double.name))
        #expect(try connection.execute(Self.double, [.int64(4)]).int64(0, 0) == 8)
    }

    @Test func anErrorAbortsTheRestOfItsSegmentAndTheConnectionStaysUsable() throws {
        let connection = try PostgresConnection(conninfo: try TestCluster.cluster().conninfo())
        var pipeline = PostgresPipeline()
        pipeline.append("SELECT 1")
        pipeline.append("SELECT 1 / $1::int4", [.int32(0)])
        pipeline.append("SELECT 3")
        pipeline.sync()
        pipeline.append("SELECT 4")
        let results = try connection.run(pipeline)
        #expect(try results.result(0).int64(0, 0) == 1)
        let failure = try #require(results.firstFailure)
        #expect(failure.index == 1)
        #expect(failure.error.code == .statementFailed)
        #expect(failure.error.sqlState == "22012")
        let aborted = #expect(throws: PostgresError.self) { try results.result(2) }
        #expect(aborted?.code == .statementFailed)
        #expect(aborted?.sqlState == nil)
        #expect(aborted?.message.contains("not run") == true)
        // After the sync point the statements run again.
        #expect(try results.result(3).int64(0, 0) == 4)
        #expect(throws: PostgresError.self) { try results.get() }
        // Out of pipeline mode: plain statements and another flight work.
        #expect(connection.isUsable)
        #expect(try connection.execute("SELECT 5").int64(0, 0) == 5)
        var again = PostgresPipeline()
        again.append("SELECT 6")
        #expect(try connection.run(again).get()[0].int64(0, 0) == 6)
    }

    @Test func aStatementThatFailsToPrepareFailsWithItsError() throws {
        let connection = try PostgresConnection(conninfo: try TestCluster.cluster().conninfo())
        let broken = PostgresStatement(name: "test_pipeline_broken", sql: "SELEC 1")
        var pipeline = PostgresPipeline()
        pipeline.append(broken)
        pipeline.append("SELECT 2")
        let results = try connection.run(pipeline)
        #expect(results.firstFailure?.index == 0)
        #expect(results.firstFailure?.error.sqlState == "42601")
        #expect(throws: PostgresError.self) { try results.result(1) }
        #expect(!connection.prepared.contains(broken.name))
        #expect(try connection.execute("SELECT 7").int64(0, 0) == 7)
    }

    /// Inside BEGIN, a failed statement leaves the transaction failed past
    /// the sync point, until a ROLLBACK.
    @Test func aFailureInsideATransactionAbortsItsCommit() throws {
        let conninfo = try TestCluster.freshDatabase()
        let connection = try PostgresConnection(conninfo: conninfo)
        try connection.executeScript("CREATE TABLE t (v int8 PRIMARY KEY)")
        var pipeline = PostgresPipeline()
        pipeline.append("BEGIN")
        pipeline.append("INSERT INTO t VALUES (1)")
        pipeline.append("INSERT INTO t VALUES (1)")
        pipeline.append("COMMIT")
        let results = try connection.run(pipeline)
        #expect(results.firstFailure?.index == 2)
        #expect(results.firstFailure?.error.sqlState == "23505")
        #expect(throws: PostgresError.self) { try results.result(3) }
        connection.rollBackAfterFailure()
        #expect(try connection.execute("SELECT count(*) FROM t").int64(0, 0) == 0)
    }

    /// The backend ends in the middle of the flight: what was not answered
    /// is `CONNECTION_LOST`, and the connection says it is lost.
    @Test func aConnectionLostMidFlightIsConnectionLost() throws {
        let connection = try PostgresConnection(conninfo: try TestCluster.cluster().conninfo())
        var pipeline = PostgresPipeline()
        pipeline.append("SELECT 1")
        pipeline.append("SELECT pg_terminate_backend(pg_backend_pid())")
        pipeline.append("SELECT 3")
        let results = try connection.run(pipeline)
        #expect(try results.result(0).int64(0, 0) == 1)
        let failure = try #require(results.firstFailure)
        #expect(failure.index == 1)
        #expect(failure.error.code == .connectionLost)
        let after = #expect(throws: PostgresError.self) { try results.result(2) }
        #expect(after?.code == .connectionLost)
        #expect(!connection.isUsable)
        let refused = #expect(throws: PostgresError.self) { try connection.run(pipeline) }
        #expect(refused?.code == .connectionLost)
    }
}
