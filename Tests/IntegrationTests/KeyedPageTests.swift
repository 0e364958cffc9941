import ChecklistClient
import ChecklistModel
import ChecklistWire
import Testing

/// A list whose items carry client keys (every list imported from the
/// Shopping List app's files does), paged through every client path against
/// the real server: the decoded `page`, `pageBytes`, the paging cursor and
/// the `checklist` CLI. The library announces CLIENT_KEYS, so every row of
/// these pages carries its key after the price (flag bit 4).
@Suite(.timeLimit(.minutes(10))) struct KeyedPageTests {
    /// Five keyed items with every optional field in some row, then two
    /// without a key (keyed and unkeyed rows side by side, as in the
    /// vector `page-client-keys`).
    static let fields: [ItemFields] = (0..<7).map { i in
        ItemFields(text: "item \(i) " + String(repeating: "ü", count: i), checked: i % 2 == 1,
                   due: i % 3 == 0 ? Int64(i) * 86_400 - 500_000 : nil, remind: i == 3,
                   price: i % 2 == 0 ? Int64(i) * 149 - 300 : nil,
                   clientKey: i < 5 ? "0C5A3E1B-9F2D-4E7A-8B61-3D2F5A7C9E1\(i)" : nil)
    }

    @Test(arguments: [false, true])
    func everyClientPathPagesAKeyedList(compression: Bool) async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let client = try await ChecklistConnection.connect(host: "127.0.0.1", port: server.port, clientName: "keyed-pages",
                                                           compression: compression)
        let list = try await client.createList(name: "Keyed", icon: "")
        _ = try await client.patch(list.id, ops: Self.fields.map { .insert(tempRef: nil, position: .end, fields: $0) })

        // The decoded page: the reference.
        let reference = try await client.page(list.id, limit: 100)
        #expect(reference.items.map(\.fields) == Self.fields)

        // `pageBytes`, whole and from an offset inside the keyed rows.
        for offset in [0, 2] {
            let bytes = try await client.pageBytes(list.id, start: .offset(UInt64(offset)), limit: 100)
            #expect(bytes.count == Self.fields.count - offset && bytes.total == UInt64(Self.fields.count))
            #expect(bytes.items == Array(reference.items[offset...]))
        }

        // The paging cursor, on pages of two rows (several keyed pages).
        let arrived = AwaitedState(0)
        let cursor = try await PagingCursor(connection: client, list: list.id, viewport: Self.fields.count, pageSize: 2,
                                            prefetchPages: 0) { _, _, _ in arrived.withLock { $0 += 1 } }
        cursor.scroll(toTop: 0)
        let pages = (Self.fields.count + 1) / 2
        #expect(await arrived.wait(timeout: .seconds(30)) { $0 >= pages })
        #expect(cursor.failure == nil)
        for (index, item) in reference.items.enumerated() {
            let row = cursor.withRow(index) { slot in
                Item(id: slot.id, fields: ItemFields(text: slot.text, checked: slot.checked, due: slot.due,
                                                     remind: slot.remind, price: slot.price, clientKey: item.fields.clientKey))
            }
            #expect(row == item, "row \(index)")
        }
        await client.close()

        // The CLI (its own connection, announcing CLIENT_KEYS as the library does).
        let shown = try CLI(server: "127.0.0.1:\(server.port)").json("show", "\(list.id.rawValue)")
        let items = try #require(shown["items"] as? [[String: Any]])
        #expect(items.map { $0["text"] as? String } == Self.fields.map(\.text))
        #expect(items.map { $0["id"] as? Int } == reference.items.map { Int($0.id.rawValue) })
        #expect(items.map { $0["checked"] as? Bool } == Self.fields.map(\.checked))
    }
}
