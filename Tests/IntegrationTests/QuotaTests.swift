import ChecklistClient
import ChecklistModel
import ChecklistTesting
import Testing

/// `checklistd --quota-lists/--quota-items` end to end: the exact edge, a
/// refusal applies nothing, and the counts hold across a restart (they are
/// the store's, recovered from the log).
@Suite(.timeLimit(.minutes(10))) struct QuotaTests {
    func insert(_ text: String) -> PatchOperation { .insert(tempRef: nil, position: .end, fields: ItemFields(text: text)) }

    @Test func itemsAndListsAtTheEdgeAcrossARestart() async throws {
        let arguments = ["--quota-items", "3", "--quota-lists", "1"]
        let first = try TestServer.start(arguments)
        let directory = first.directory
        defer { directory.remove() }
        var client = try await first.connect()
        let list = try await client.createList(name: "Camping").id
        #expect(await wireRefusal { _ = try await client.createList(name: "Second") } == (.quotaExceeded, "lists"))
        _ = try await client.patch(list, ops: [insert("Tent"), insert("Stove")])  // one under
        _ = try await client.patch(list, ops: [insert("Gas")])  // at
        #expect(await wireRefusal { _ = try await client.patch(list, ops: [insert("Lamp")]) } == (.quotaExceeded, "items"))
        await client.close()
        _ = first.process.stop()

        let second = try TestServer.start(arguments, directory: directory)
        defer { _ = second.process.stop() }
        client = try await second.connect()
        #expect(await wireRefusal { _ = try await client.patch(list, ops: [insert("Lamp")]) } == (.quotaExceeded, "items"))
        let page = try await client.page(list, limit: 10, filter: .all)
        #expect(page.items.map(\.text) == ["Tent", "Stove", "Gas"] && page.revision == 3)
        // Deletions always work, and make room.
        _ = try await client.patch(list, ops: [.delete(.id(page.items[0].id))])
        _ = try await client.patch(list, ops: [insert("Lamp")])
        await client.close()
    }
}

/// `checklistd --quota-bytes` end to end: one under, at and over (refused
/// whole) and the count recovered across a restart.
@Suite(.timeLimit(.minutes(10))) struct ByteQuotaTests {
    @Test func bytesAtTheEdgeAcrossARestart() async throws {
        let quota = QuotaTests()
        let arguments = ["--quota-bytes", "22"]
        let first = try TestServer.start(arguments)
        let directory = first.directory
        defer { directory.remove() }
        var client = try await first.connect()
        let list = try await client.createList(name: "Trip").id  // 11 bytes with the library's icon "No Icon"
        _ = try await client.patch(list, ops: [quota.insert("Tent"), quota.insert("Gas")])  // 18
        _ = try await client.patch(list, ops: [quota.insert("Mat")])  // 21: one under
        #expect(await wireRefusal { _ = try await client.patch(list, ops: [quota.insert("ab"), quota.insert("c")]) } == (.quotaExceeded, "bytes"))
        _ = try await client.patch(list, ops: [quota.insert("a")])  // 22: at
        await client.close()
        _ = first.process.stop()

        let second = try TestServer.start(arguments, directory: directory)
        defer { _ = second.process.stop() }
        client = try await second.connect()
        #expect(await wireRefusal { _ = try await client.patch(list, ops: [quota.insert("x")]) } == (.quotaExceeded, "bytes"))
        let page = try await client.page(list, limit: 10, filter: .all)
        #expect(page.items.map(\.text) == ["Tent", "Gas", "Mat", "a"])
        _ = try await client.patch(list, ops: [.delete(.id(page.items[0].id))])  // deletions always work: 18
        _ = try await client.patch(list, ops: [quota.insert("Tarp")])  // 22 again
        await client.close()
    }
}
