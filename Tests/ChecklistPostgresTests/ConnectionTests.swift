import ChecklistPostgres
import Testing

@Suite(.enabled(if: TestCluster.binariesFound, TestCluster.skipReason), .timeLimit(.minutes(2)))
struct ConnectionTests {
    @Test func aURIConnectsToo() throws {
        let cluster = try TestCluster.cluster()
        let connection = try PostgresConnection(conninfo: "postgresql://postgres@127.0.0.1:\(cluster.port)/postgres")
        #expect(connection.serverVersion >= 140000)
        let result = try connection.execute("SELECT $1::bigint + 1, $2::text", [.int64(41), .text("é")])
        #expect(try result.int64(0, 0) == 42)
        #expect(try result.string(0, 1) == "é")
    }

    @Test func anUnreachableServerIsConnectionFailed() throws {
        let error = #expect(throws: PostgresError.self) {
            _ = try PostgresConnection(conninfo: "host=127.0.0.1 port=1 user=postgres connect_timeout=5")
        }
        #expect(error?.code == .connectionFailed)
        #expect(error?.message.contains("127.0.0.1") == true)
    }

    @Test func aBadStatementCarriesItsSQLState() throws {
        let connection = try PostgresConnection(conninfo: try TestCluster.cluster().conninfo())
        let error = #expect(throws: PostgresError.self) { try connection.execute("SELEC 1") }
        #expect(error?.code == .statementFailed)
        #expect(error?.sqlState == "42601")
        // The connection is still usable after a refused statement.
        #expect(try connection.execute("SELECT 1").int64(0, 0) == 1)
    }

    @Test func binaryArraysRoundTripWithNulls() throws {
        let connection = try PostgresConnection(conninfo: try TestCluster.cluster().conninfo())
        let result = try connection.execute("SELECT a, b, c FROM unnest($1::int8[], $2::text[], $3::bytea[]) AS t(a, b, c)",
                                            [.int64Array([1, nil, -3]), .textArray(["x", "", nil]), .byteaArray([[0], nil, []])])
        #expect(result.rowCount == 3)
        #expect(try result.int64(2, 0) == -3)
        #expect(result.isNull(1, 0))
        #expect(try result.string(1, 1) == "")
        #expect(result.isNull(2, 1))
        #expect(result.bytes(0, 2) == [0])
        #expect(result.bytes(2, 2) == [])
    }
}
