import ChecklistClient
import ChecklistModel
import ChecklistWire
import Foundation
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
            var keys: [String?] = []
            bytes.forEachRow { keys.append($0.clientKey) }
            #expect(keys == Self.fields[offset...].map(\.clientKey))
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

    /// `PageBytes`, the client's in-place page, against every golden vector
    /// of PAGE (read from Protocol/vectors): the rows it visits are the rows
    /// `PageMessage.decode` gives, keys included, and the malformed vector
    /// fails on the documented field.
    @Test func pageBytesDecodesEveryPageVector() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Protocol/vectors").standardized
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }
        var checked: [String] = []
        for name in names {
            let data = try Data(contentsOf: directory.appendingPathComponent(name))
            let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            guard json["message"] as? String == "PAGE", let hex = json["hex"] as? String else { continue }
            checked.append(name)
            let frame = stride(from: 0, to: hex.count, by: 2).map { i in
                UInt8(hex[hex.index(hex.startIndex, offsetBy: i)...].prefix(2), radix: 16)!
            }
            let body = Array(frame.dropFirst(FrameHeader.size))
            if let error = json["error"] as? [String: Any] {
                #expect(performing: { _ = try PageBytes(body: body, filter: .all) }, throws: { thrown in
                    (thrown as? ChecklistError)?.field == error["field"] as? String
                })
                continue
            }
            let reference = try WireReader.decode(body) { (r) throws(ChecklistError) in try PageMessage.decode(from: &r) }
            let bytes = try PageBytes(body: body, filter: .all)
            #expect(bytes.header == reference.header, "\(name)")
            #expect(bytes.items == reference.rows, "\(name)")
        }
        #expect(checked.contains("page-client-keys.json") && checked.contains("malformed-page-truncated-row.json"))
    }
}
