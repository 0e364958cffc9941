import ChecklistClient
import ChecklistModel
import ChecklistWire
import Testing

/// The client library against the real `checklistd` binary.
@Suite(.timeLimit(.minutes(10))) struct ClientLibraryTests {
    @Test(arguments: TestStore.available) func createAddPageCheckFilterMoveRemove(store: TestStore) async throws {
        let server = try TestServer.start(store: store)
        defer { server.stop() }
        let client = try await server.connect()
        let list = try await client.createList(name: "Groceries", icon: "Groceries")
        #expect(list.revision == 1 && list.itemCount == 0)

        let added = try await client.patch(list.id, ops: ["Milk", "Eggs", "Bread"].enumerated().map { i, text in
            .insert(tempRef: UInt64(i + 1), position: .end, fields: ItemFields(text: text))
        })
        #expect(added.revision == 2)
        #expect(added.ids.map(\.tempRef) == [1, 2, 3])
        let ids = added.ids.map(\.id)

        _ = try await client.patch(list.id, baseRevision: 2, ops: [.setChecked(.id(ids[1]), true)])
        let unchecked = try await client.page(list.id, limit: 10, filter: .unchecked)
        #expect(unchecked.total == 2)
        #expect(unchecked.items.map(\.text) == ["Milk", "Bread"])

        _ = try await client.patch(list.id, ops: [.move(.id(ids[2]), toIndex: 0)])
        _ = try await client.patch(list.id, ops: [.delete(.id(ids[0]))])
        let all = try await client.page(list.id, limit: 10, filter: .all)
        #expect(all.items.map(\.text) == ["Bread", "Eggs"])
        #expect(all.items.map(\.checked) == [false, true])
        #expect(all.revision == 5)

        let summary = try #require(try await client.lists().first { $0.id == list.id })
        #expect(summary.itemCount == 2 && summary.uncheckedCount == 1 && summary.revision == 5)
        await client.close()
    }

    @Test(arguments: TestStore.available) func staleBaseRevisionIsAConflictAndAppliesNothing(store: TestStore) async throws {
        let server = try TestServer.start(store: store)
        defer { server.stop() }
        let client = try await server.connect()
        let list = try await client.createList(name: "To Do", icon: "Chores")
        _ = try await client.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "Walk the dog"))])
        let error = await #expect(throws: ClientError.self) {
            _ = try await client.patch(list.id, baseRevision: 1,
                                       ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "late"))])
        }
        #expect(error?.wireCode == .conflict)
        #expect(error?.serverError?.revision == 2)
        let page = try await client.page(list.id, limit: 10, filter: .all)
        #expect(page.items.map(\.text) == ["Walk the dog"])
        #expect(page.revision == 2)
        await client.close()
    }

    @Test(arguments: TestStore.available) func pipelinedRequestsOnOneConnectionAllGetTheirOwnAnswers(store: TestStore) async throws {
        let server = try TestServer.start(store: store)
        defer { server.stop() }
        let client = try await server.connect()
        let list = try await client.createList(name: "Pipelined", icon: "Inbox")
        let count = 300
        // Every task sends at once; each insert's answer must carry its own temp ref.
        let results = try await withThrowingTaskGroup(of: (Int, PatchOK).self) { group in
            for i in 0..<count {
                group.addTask {
                    let ok = try await client.patch(list.id, ops: [
                        .insert(tempRef: UInt64(i + 1), position: .end, fields: ItemFields(text: "row \(i)"))])
                    return (i, ok)
                }
            }
            var all: [(Int, PatchOK)] = []
            for try await r in group { all.append(r) }
            return all
        }
        #expect(results.count == count)
        for (i, ok) in results { #expect(ok.ids.map(\.tempRef) == [UInt64(i + 1)]) }
        // Revisions 2...count+1 each handed out exactly once.
        #expect(Set(results.map(\.1.revision)) == Set((2...UInt64(count + 1))))
        let page = try await client.page(list.id, limit: count, filter: .all)
        #expect(page.total == UInt64(count))
        #expect(Set(page.items.map(\.text)) == Set((0..<count).map { "row \($0)" }))
        await client.close()
    }

    @Test(arguments: TestStore.available) func twoClientsSeeEachOthersChanges(store: TestStore) async throws {
        let server = try TestServer.start(store: store)
        defer { server.stop() }
        let a = try await server.connect()
        let b = try await server.connect()
        let list = try await a.createList(name: "Shared", icon: "Folder")
        let fromB = try await b.lists()
        #expect(fromB.map(\.name) == ["Shared"])
        _ = try await b.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "from B"))])
        let page = try await a.page(list.id, limit: 5, filter: .all)
        #expect(page.items.map(\.text) == ["from B"])
        await a.close()
        await b.close()
    }

    @Test(arguments: TestStore.available) func anchorPagingKeepsItsPlaceWhenRowsAreInsertedAbove(store: TestStore) async throws {
        let server = try TestServer.start(store: store)
        defer { server.stop() }
        let client = try await server.connect()
        let list = try await client.createList(name: "Anchored", icon: "Inbox")
        let ok = try await client.patch(list.id, ops: (0..<20).map { i in
            .insert(tempRef: UInt64(i + 1), position: .end, fields: ItemFields(text: "r\(i)"))
        })
        let anchor = ok.ids[10].id
        _ = try await client.patch(list.id, ops: [.insert(tempRef: nil, position: .index(0), fields: ItemFields(text: "new"))])
        let page = try await client.page(list.id, start: .anchor(anchor), limit: 3, filter: .all)
        #expect(page.offset == 11)
        #expect(page.items.map(\.text) == ["r10", "r11", "r12"])
        await client.close()
    }
}
