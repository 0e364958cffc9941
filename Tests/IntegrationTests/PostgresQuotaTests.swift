import ChecklistClient
import ChecklistModel
import ChecklistTesting
import Testing

/// `--quota-items` on two nodes sharing one PostgreSQL database: the quota
/// is checked against the database's counts in the commit's transaction,
/// so the edge is exact through either node (one under and at pass, over
/// is refused whole), two nodes racing for the last item never both get
/// it, and the counts hold after a restart.
@Suite(.enabled(if: PostgresCluster.binariesFound, "no PostgreSQL binaries (Debian package postgresql): skipped"),
       .timeLimit(.minutes(10)))
struct PostgresQuotaTests {
    static let arguments = ["--quota-items", "4"]

    func insert(_ texts: String...) -> [PatchOperation] {
        texts.map { .insert(tempRef: nil, position: .end, fields: ItemFields(text: $0)) }
    }

    @Test func itemsAtTheEdgeThroughTwoNodesAndAfterARestart() async throws {
        let nodes = try PostgresNodesTests.nodes(2, Self.arguments)
        let database = try #require(nodes[0].postgres)
        let a = try await nodes[0].connect()
        let b = try await nodes[1].connect()
        let x = try await a.createList(name: "X", icon: "Inbox").id
        let y = try await b.createList(name: "Y", icon: "Inbox").id

        _ = try await a.patch(x, ops: insert("x1", "x2"))
        _ = try await b.patch(y, ops: insert("y1"))  // 3: one under
        _ = try await a.patch(x, ops: insert("x3"))  // 4: at
        #expect(await wireRefusal { _ = try await b.patch(y, ops: insert("over-b")) } == (.quotaExceeded, "items"))
        #expect(await wireRefusal { _ = try await a.patch(x, ops: insert("over-a1", "over-a2")) } == (.quotaExceeded, "items"))

        // Rounds of a race for the last item: one node or the other gets
        // it, never both, whichever node's view of the other lags.
        var winners: [String] = []
        for round in 0..<3 {
            let first = try #require(try await PostgresNodesTests.texts(x, a).first)
            _ = try await a.patch(x, ops: [.delete(.id(first.id))])  // 3
            async let viaA = wireRefusal { _ = try await a.patch(x, ops: insert("race-a\(round)")) }
            async let viaB = wireRefusal { _ = try await b.patch(y, ops: insert("race-b\(round)")) }
            let (ra, rb) = await (viaA, viaB)
            #expect([ra, rb].filter { $0 == (nil, nil) }.count == 1, "round \(round): \(ra) \(rb)")
            #expect([ra, rb].filter { $0 == (.quotaExceeded, "items") }.count == 1, "round \(round): \(ra) \(rb)")
            if ra == (nil, nil) { winners.append("race-a\(round)") }
            if rb == (nil, nil) { winners.append("race-b\(round)") }
        }
        await a.close()
        await b.close()
        nodes.forEach { $0.stop() }

        // After a restart, one node on the same database: exactly 4 items,
        // the refused patches nowhere, the quota still at its edge.
        let again = try TestServer.start(Self.arguments, store: .postgres, postgres: database)
        defer { again.stop() }
        let c = try await again.connect()
        let inX = try await PostgresNodesTests.texts(x, c)
        let inY = try await PostgresNodesTests.texts(y, c)
        let held = inX + inY
        #expect(held.count == 4)
        let texts = Set(held.map(\.text))
        #expect(winners.allSatisfy(texts.contains) && !texts.contains { $0.hasPrefix("over") })
        #expect(await wireRefusal { _ = try await c.patch(y, ops: insert("over-c")) } == (.quotaExceeded, "items"))
        // Deletions always pass, and make room for one more.
        if let first = inX.first {
            _ = try await c.patch(x, ops: [.delete(.id(first.id))])
        } else {
            _ = try await c.patch(y, ops: [.delete(.id(inY[0].id))])
        }
        _ = try await c.patch(y, ops: insert("after-restart"))
        #expect(await wireRefusal { _ = try await c.patch(x, ops: insert("over-c2")) } == (.quotaExceeded, "items"))
        await c.close()
    }
}
