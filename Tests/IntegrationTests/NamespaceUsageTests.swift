import ChecklistClient
import ChecklistModel
import ChecklistTesting
import Foundation
import Testing

/// STATS option USAGE against a real `checklistd --tokens`: the counts of
/// the asking connection's own namespace follow its creates, patches and
/// deletions, never show another namespace's, and come with the quotas;
/// a STATS without the option carries no usage; `checklist stats --usage`
/// prints them.
@Suite(.timeLimit(.minutes(10))) struct NamespaceUsageTests {
    typealias Usage = StatsReport.UsageStatus

    func usage(_ connection: ChecklistConnection) async throws -> Usage {
        try #require(try await connection.stats(options: .usage).usage)
    }

    func insert(_ text: String) -> PatchOperation { .insert(tempRef: nil, position: .end, fields: ItemFields(text: text)) }

    @Test(arguments: TestStore.available)
    func usageFollowsChangesOfItsOwnNamespaceOnly(store: TestStore) async throws {
        let server = try TokenServer.start(["--quota-lists", "5", "--quota-bytes", "1000"], store: store)
        defer { server.stop() }
        let alice = try await server.connect(token: TokenServer.alice)
        let bob = try await server.connect(token: TokenServer.bob)
        func expect(_ connection: ChecklistConnection, _ lists: UInt64, _ items: UInt64, _ bytes: UInt64,
                    sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let expected = Usage(lists: lists, items: items, bytes: bytes, quotaLists: 5, quotaItems: nil, quotaBytes: 1000)
            #expect(try await usage(connection) == expected, sourceLocation: sourceLocation)
        }

        // Without the option the report has no usage section, as before.
        #expect(try await alice.stats().usage == nil)
        try await expect(alice, 0, 0, 0)

        // "Trip" and the library's icon "No Icon": 11 bytes.
        let trip = try await alice.createList(name: "Trip").id
        try await expect(alice, 1, 0, 11)
        _ = try await alice.patch(trip, ops: [insert("Tent"), insert("Gas")])
        try await expect(alice, 1, 2, 18)
        try await expect(bob, 0, 0, 0)

        let chores = try await bob.createList(name: "Chores").id  // 13 bytes
        _ = try await bob.patch(chores, ops: [insert("Dishes")])
        try await expect(bob, 1, 1, 19)
        try await expect(alice, 1, 2, 18)

        let page = try await alice.page(trip, limit: 10, filter: .all)
        _ = try await alice.patch(trip, ops: [.delete(.id(page.items[0].id)), .setText(.id(page.items[1].id), "Gas can")])
        try await expect(alice, 1, 1, 18)  // - "Tent" (4), + " can" (4)
        _ = try await alice.deleteList(trip)
        try await expect(alice, 0, 0, 0)
        try await expect(bob, 1, 1, 19)

        // The CLI, as bob: the same figures, in JSON and as a line of text.
        let cli = CLI(server: "127.0.0.1:\(server.port)", options: ["--token", TokenServer.bob])
        let json = try cli.json("stats", "--usage")
        let reported = try #require(json["usage"] as? [String: Any])
        #expect(reported["lists"] as? Int == 1 && reported["items"] as? Int == 1 && reported["bytes"] as? Int == 19)
        let quotas = try #require(reported["quotas"] as? [String: Any])
        #expect(quotas["lists"] as? Int == 5 && quotas["items"] is NSNull && quotas["bytes"] as? Int == 1000)
        #expect(try cli.json("stats")["usage"] == nil)
        let text = try cli.run("stats", "--usage")
        #expect(text.status == 0)
        #expect(text.stdout.contains("\nnamespace    1 lists of 5, 1 items, 19 bytes of 1000\n"))

        await alice.close()
        await bob.close()
    }
}
