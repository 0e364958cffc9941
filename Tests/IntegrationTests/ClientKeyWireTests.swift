import ChecklistClient
import ChecklistModel
import ChecklistSnapshot
import ChecklistWire
import Testing

/// Items' client keys through the real server (Protocol/SPEC.md 6.1, 6.7,
/// 6.8, 6.14): a client that announced CLIENT_KEYS reads them, one that did
/// not sees the rows and pushes it always saw; duplicates and overlong keys
/// are refused with their documented errors.
@Suite(.timeLimit(.minutes(2))) struct ClientKeyWireTests {
    static let uuid = "0C5A3E1B-9F2D-4E7A-8B61-3D2F5A7C9E10"

    static func page(_ socket: RawConnection, _ request: GetPage, id: UInt32) throws -> PageMessage {
        try socket.send(.getPage(request), id: id)
        let answer = try socket.receive()
        guard answer.header.requestID == id, case .page(let page) = answer.message else {
            throw TestFailure("expected PAGE, got \(answer.message)")
        }
        return page
    }

    /// The items of an EXPORT of `list`, read with the snapshot reader.
    static func exportedItems(_ socket: RawConnection, _ list: ListID, id: UInt32) throws -> [Item] {
        var data: [UInt8] = []
        var action = Export.Action.start(chunkBytes: 0, lists: [list])
        while true {
            try socket.send(.export(Export(action)), id: id)
            guard case .exportChunk(let chunk) = try socket.receive().message else { throw TestFailure("no EXPORT_CHUNK") }
            data += chunk.data
            if chunk.status == .end { break }
            action = .next(sequence: chunk.sequence + 1)
        }
        var offset = 0
        let reader = try SnapshotReader(name: "export") { (buffer: UnsafeMutableRawBufferPointer) throws(SnapshotError) -> Int in
            let n = min(buffer.count, data.count - offset)
            data.withUnsafeBytes { all in buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: all[offset..<offset + n])) }
            offset += n
            return n
        }
        var items: [Item] = []
        while let record = try reader.next() {
            if case .item(let item) = record { items.append(item) }
        }
        return items
    }

    @Test func keysReachOnlyClientsThatAnnouncedThem() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let keyed = try RawConnection(port: server.port)
        let ok = try keyed.handshake(features: [.clientKeys])
        #expect(ok.features.contains(.clientKeys))
        let old = try RawConnection(port: server.port)
        try old.handshake(features: [])

        try keyed.send(.createList(CreateList(name: "Shopping", icon: "")), id: 2)
        guard case .listCreated(let info) = try keyed.receive().message else { throw TestFailure("no LIST") }
        let list = info.summary.id
        try old.send(.subscribe(Subscribe(entries: [Subscribe.Entry(list: list)])), id: 2)
        guard case .subscribed = try old.receive().message else { throw TestFailure("no SUBSCRIBED") }

        let ops: [PatchOperation] = [
            .insert(tempRef: nil, position: .end, fields: ItemFields(text: "Milk", price: 299, clientKey: Self.uuid)),
            .insert(tempRef: nil, position: .end, fields: ItemFields(text: "Eggs")),
            .setKey(.id(ItemID(2)), "offline-1"),
        ]
        try keyed.send(.patch(Patch(list: list, ops: ops)), id: 3)
        guard case .patchOK = try keyed.receive().message else { throw TestFailure("no PATCH_OK") }

        // The old client's push: the insert without its key, SET_KEY left out.
        guard case .changePush(let push) = try old.receive().message, case .patched(let pushed) = push.change.kind else {
            throw TestFailure("no CHANGE")
        }
        #expect(pushed == [.insert(id: ItemID(1), index: 0, fields: ItemFields(text: "Milk", price: 299)),
                           .insert(id: ItemID(2), index: 1, fields: ItemFields(text: "Eggs"))])

        let keyedPage = try Self.page(keyed, GetPage(list: list, limit: 10), id: 4)
        #expect(keyedPage.rows.map(\.fields.clientKey) == [Self.uuid, "offline-1"])
        let oldPage = try Self.page(old, GetPage(list: list, limit: 10), id: 3)
        #expect(oldPage.rows.map(\.fields.clientKey) == [nil, nil])
        #expect(oldPage.rows.map(\.fields.text) == ["Milk", "Eggs"])

        // Paging from a key, for either client.
        let fromKey = try Self.page(old, GetPage(list: list, start: .key("offline-1"), limit: 10), id: 4)
        #expect(fromKey.header.offset == 1 && fromKey.rows.map(\.id) == [ItemID(2)])
        try keyed.send(.getPage(GetPage(list: list, start: .key("nobody"), limit: 10)), id: 5)
        #expect(try keyed.receiveError().error.code == .notFound)

        // A key another item has, and a key over 64 bytes: nothing is applied.
        try keyed.send(.patch(Patch(list: list, ops: [.insert(tempRef: nil, position: .end,
                                                              fields: ItemFields(text: "Bread", clientKey: Self.uuid))])), id: 6)
        let duplicate = try keyed.receiveError().error
        #expect(duplicate.code == .duplicateKey && duplicate.code.rawValue == 16 && duplicate.field == "clientKey")
        try keyed.send(.patch(Patch(list: list, ops: [.setKey(.id(ItemID(1)), String(repeating: "k", count: 65))])), id: 7)
        let long = try keyed.receiveError().error
        #expect(long.code == .limitExceeded && long.field == "clientKey")
        #expect(try Self.page(keyed, GetPage(list: list, limit: 10), id: 8) == keyedPage)

        // EXPORT: the snapshot carries keys only for the client that announced them.
        #expect(try Self.exportedItems(keyed, list, id: 9).map(\.fields.clientKey) == [Self.uuid, "offline-1"])
        #expect(try Self.exportedItems(old, list, id: 5).map(\.fields.clientKey) == [nil, nil])
    }

    /// The client library announces CLIENT_KEYS and reads keys back.
    @Test func theClientLibraryReadsKeys() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let client = try await server.connect()
        let list = try await client.createList(name: "L")
        try await client.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "a", clientKey: "ka"))])
        let page = try await client.page(list.id, start: .key("ka"), limit: 5)
        #expect(page.items.map(\.fields.clientKey) == ["ka"])
        await client.close()
    }

    /// The write-ahead log keeps keys: after a crash the restarted server
    /// still pages by them and still refuses their duplicates.
    @Test func keysSurviveARestart() async throws {
        let first = try TestServer.start(["--fsync", "always"])  // what a client was told is saved
        let client = try await first.connect()
        let list = try await client.createList(name: "L")
        try await client.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "a", clientKey: "ka")),
                                              .insert(tempRef: nil, position: .end, fields: ItemFields(text: "b")),
                                              .setKey(.id(ItemID(2)), "kb")])
        await client.close()
        first.crash()
        let second = try TestServer.start(["--fsync", "always"], directory: first.directory)
        defer { second.stop() }
        let again = try await second.connect()
        let page = try await again.page(list.id, start: .key("kb"), limit: 5)
        #expect(page.offset == 1 && page.items.map(\.fields.clientKey) == ["kb"])
        do {
            try await again.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "c", clientKey: "ka"))])
            Issue.record("a duplicate key was accepted after the restart")
        } catch let error as ClientError {
            #expect(error.wireCode == .duplicateKey)
        }
        await again.close()
    }
}
