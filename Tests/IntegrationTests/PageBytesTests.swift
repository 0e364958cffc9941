import ChecklistClient
import ChecklistModel
import ChecklistWire
import Testing

/// `pageBytes`, the client library's page without `Item`s, against `page`
/// (the decoded reference) on the real server.
@Suite(.timeLimit(.minutes(10))) struct PageBytesTests {
    @Test(arguments: [false, true])
    func pageBytesHoldTheRowsOfPage(compression: Bool) async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let client = try await ChecklistConnection.connect(host: "127.0.0.1", port: server.port, clientName: "page-bytes",
                                                           compression: compression)
        let list = try await client.createList(name: "Rows", icon: "")
        // Every field: checked, remind with a due date, prices, long texts
        // (so a 100-row page is compressed when compression is on).
        let ops = (0..<300).map { i in
            PatchOperation.insert(tempRef: nil, position: .end, fields: ItemFields(
                text: "row \(i) " + String(repeating: "é", count: i % 40), checked: i % 3 == 0,
                due: i % 4 == 0 ? Int64(i) * 86_400 - 1_000_000 : nil, remind: i % 8 == 0,
                price: i % 5 == 0 ? Int64(i) * 199 - 5000 : nil))
        }
        _ = try await client.patch(list.id, ops: ops)
        for (offset, filter) in [(0, RowFilter.all), (250, .all), (10, .checked), (0, .unchecked), (400, .all)] {
            let reference = try await client.page(list.id, start: .offset(UInt64(offset)), limit: 100, filter: filter)
            let bytes = try await client.pageBytes(list.id, start: .offset(UInt64(offset)), limit: 100, filter: filter)
            #expect(bytes.total == reference.total && bytes.offset == reference.offset && bytes.count == reference.items.count)
            #expect(bytes.header.revision == reference.revision && bytes.header.list == list.id && bytes.filter == filter)
            #expect(bytes.items == reference.items)
            var ids: [ItemID] = []
            bytes.forEachRow { ids.append($0.id) }
            #expect(ids == reference.items.map(\.id))
        }
        await #expect(throws: ClientError.self) { try await client.pageBytes(ListID(999), limit: 10) }
        await client.close()
    }
}
