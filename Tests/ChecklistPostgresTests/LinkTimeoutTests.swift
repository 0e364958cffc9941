import ChecklistPostgres
import ChecklistSocket
import ChecklistTesting
import Foundation
import Testing

/// The link limits a connection adds (docs/POSTGRES.md, "A dead link"), and
/// that the operator's own values win over them.
@Suite(.enabled(if: TestCluster.binariesFound, TestCluster.skipReason), .timeLimit(.minutes(2)))
struct LinkTimeoutTests {
    private func setting(_ name: String, on connection: PostgresConnection) throws -> String? {
        try connection.execute("SELECT current_setting($1)", [.text(name)]).string(0, 0)
    }

    @Test func unsetLimitsGetTheDefaults() throws {
        let connection = try PostgresConnection(conninfo: try TestCluster.cluster().conninfo())
        for (keyword, value) in LinkTimeouts.clientDefaults {
            #expect(connection.parameter(keyword) == value, "\(keyword)")
        }
        // Only a commit transaction limits its idle time.
        #expect(try setting("idle_in_transaction_session_timeout", on: connection) == "0")
        #expect(try connection.transaction(.commit) { try setting("idle_in_transaction_session_timeout", on: connection) } == "20s")
        #expect(try connection.transaction(.readWrite) { try setting("idle_in_transaction_session_timeout", on: connection) } == "0")
        #expect(try setting("idle_in_transaction_session_timeout", on: connection) == "0")
        // The server's keepalives apply to TCP connections (this one is).
        #expect(try setting("tcp_keepalives_idle", on: connection) == "5")
        #expect(try setting("tcp_keepalives_count", on: connection) == "3")
    }

    @Test func limitsInTheConnectionStringWin() throws {
        let conninfo = try TestCluster.cluster().conninfo()
            + " tcp_user_timeout=2500 keepalives_idle=7 connect_timeout=3"
            + " options='-c idle_in_transaction_session_timeout=3s -c tcp_keepalives_idle=9'"
        let connection = try PostgresConnection(conninfo: conninfo)
        #expect(connection.parameter("tcp_user_timeout") == "2500")
        #expect(connection.parameter("keepalives_idle") == "7")
        #expect(connection.parameter("connect_timeout") == "3")
        #expect(connection.parameter("keepalives_count") == "3")  // not given: the default
        #expect(try connection.transaction(.commit) { try setting("idle_in_transaction_session_timeout", on: connection) } == "3s")
        #expect(try setting("tcp_keepalives_idle", on: connection) == "9")
        #expect(try setting("tcp_keepalives_interval", on: connection) == "2")
    }

    @Test func limitsInAURIWin() throws {
        let port = try TestCluster.cluster().port
        let connection = try PostgresConnection(
            conninfo: "postgresql://postgres@127.0.0.1:\(port)/postgres?tcp_user_timeout=4000&keepalives=0")
        #expect(connection.parameter("tcp_user_timeout") == "4000")
        #expect(connection.parameter("keepalives") == "0")
        #expect(connection.parameter("keepalives_interval") == "2")
        #expect(try connection.execute("SELECT 1").int64(0, 0) == 1)
    }

    @Test func aDatabaseSettingWinsOverTheCommitsLimit() throws {
        let conninfo = try TestCluster.freshDatabase()
        let database = try #require(conninfo.split(separator: "=").last.map(String.init))
        let altered = try TestCluster.cluster().runClient("psql", ["-d", "postgres", "-c",
            "ALTER DATABASE \(database) SET idle_in_transaction_session_timeout = '45s'"])
        #expect(altered.status == 0, "\(altered.stderr)")
        let connection = try PostgresConnection(conninfo: conninfo)
        #expect(try connection.transaction(.commit) { try setting("idle_in_transaction_session_timeout", on: connection) } == "45s")
    }

    /// A link that stops passing bytes while its sockets stay open (a hung
    /// proxy): no keepalive fires and the server's statement timeout cannot
    /// arrive, so the client bounds the wait itself. A call, and a pipeline
    /// flight, fail as `CONNECTION_LOST` once the statement timeout plus
    /// the margin passed (without the bound, each waits for as long as the
    /// stall lasts: the suite's time limit), and the connection is lost.
    @Test func aCallOnALinkThatPassesNoBytesFailsAsLost() throws {
        let cluster = try TestCluster.cluster()
        let relay = try DelayingRelay(to: try SocketAddress(host: "127.0.0.1", port: UInt16(cluster.port)), latency: .zero)
        defer { relay.stop() }
        let conninfo = "host=127.0.0.1 port=\(relay.port) user=postgres dbname=postgres"
        let connection = try PostgresConnection(conninfo: conninfo)
        try connection.setStatementTimeout(.seconds(1))
        #expect(try connection.execute("SELECT 1").int64(0, 0) == 1)
        relay.stall()
        #expect { try connection.execute("SELECT 1") } throws: { error in
            (error as? PostgresError)?.code == .connectionLost && (error as? PostgresError)?.message.contains("no answer") == true
        }
        #expect(!connection.isUsable)

        relay.heal()
        let flight = try PostgresConnection(conninfo: conninfo)
        try flight.setStatementTimeout(.seconds(1))
        relay.stall()
        var pipeline = PostgresPipeline()
        pipeline.append("SELECT 1")
        pipeline.sync()
        let results = try flight.run(pipeline)
        #expect(results.firstFailure?.error.code == .connectionLost)
        #expect(!flight.isUsable)
        relay.heal()
    }
}
