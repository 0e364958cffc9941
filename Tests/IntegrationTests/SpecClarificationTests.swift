import ChecklistClient
import ChecklistModel
import ChecklistTesting
import ChecklistWire
import Testing

/// The places of Protocol/SPEC.md that an implementer from another language
/// once had to guess, checked against the real server: compression before
/// and after the handshake, retained list creation, a change too large for
/// one frame, anchors past the last match, item ids, and SUBSCRIBED order.
@Suite(.timeLimit(.minutes(10)))
struct SpecClarificationTests {
    /// Section 1: the server compresses answers only for a client whose
    /// HELLO announced COMPRESSION, and accepts compressed bodies from any
    /// client once its HELLO_OK announced COMPRESSION.
    @Test func compressionFollowsEachSidesAnnouncement() throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let plain = try RawConnection(port: server.port)
        try plain.send(.hello(Hello(features: [], clientName: "no-compression")), id: 1)
        guard case .helloOK(let ok) = try plain.receive().1 else { throw TestFailure("expected HELLO_OK") }
        #expect(ok.features.contains(.compression))
        // A compressed CREATE_LIST from the client that did not announce COMPRESSION.
        var packed = FrameEncoder(compress: true)
        var w = WireWriter()
        packed.append(CreateList(name: String(repeating: "n", count: 1500), icon: "Inbox"), requestID: 2, to: &w)
        #expect(w.bytes[5] == FrameFlags.compressed.rawValue)
        try plain.send(w.bytes)
        let (created, answer) = try plain.receive()
        guard case .listCreated(let list) = answer else { throw TestFailure("expected LIST, got \(answer)") }
        #expect(created.requestID == 2 && list.summary.name.utf8.count == 1500)
        // LISTS of more than 1024 bytes: plain for this client, compressed for one that announced it.
        try plain.send(.listLists(ListLists()), id: 3)
        #expect(try plain.receive().0.flags == [])
        let compressing = try RawConnection(port: server.port)
        try compressing.send(.hello(Hello(features: [.compression], clientName: "compression")), id: 1)
        _ = try compressing.receive()
        try compressing.send(.listLists(ListLists()), id: 2)
        #expect(try compressing.receive().0.flags == .compressed)
    }

    /// Section 6.13: a list's creation is a retained change, so CHANGES_SINCE
    /// from revision 0 starts with LIST_CREATED.
    @Test func changesFromRevisionZeroStartWithTheCreation() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let client = try await server.connect()
        let list = try await client.createList(name: "Trip", icon: "Trips")
        try await client.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "Tickets"))])
        let changes = try await client.changes(of: list.id, since: 0)
        #expect(changes.revision == 2)
        #expect(changes.changes.map(\.revision) == [1, 2])
        #expect(changes.changes.first?.kind == .listCreated(name: "Trip", icon: "Trips"))
        await client.close()
    }

    /// Sections 6.13-6.14: a patch whose **ListChange** would not fit in one
    /// frame is OMITTED in CHANGES and in pushes alike.
    @Test func aChangeTooLargeForOneFrameIsOmittedEverywhere() async throws {
        let server = try TestServer.start(["--max-frame", "2048"])
        defer { server.stop() }
        let client = try await server.connect()
        let list = try await client.createList(name: "Big", icon: "Inbox")
        let subscriber = try RawConnection(port: server.port)
        try subscriber.handshake()
        try subscriber.send(.subscribe(Subscribe(entries: [.init(list: list.id)])), id: 2)
        guard case .subscribed = try subscriber.receive().1 else { throw TestFailure("expected SUBSCRIBED") }
        // The PATCH fits in 2048 bytes; its applied form (id and index added) does not fit a CHANGES answer.
        let text = String(repeating: "t", count: 2020)
        try await client.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: text))])
        let (pushHeader, push) = try subscriber.receive()
        #expect(pushHeader.requestID == 0 && push == .changePush(ChangePush(ListChange(list: list.id, revision: 2, kind: .omitted))))
        let changes = try await client.changes(of: list.id, since: 1)
        #expect(changes.changes == [ListChange(list: list.id, revision: 2, kind: .omitted)])
        await client.close()
    }

    /// Section 6.7: an anchor with no matching row at or after it gives an
    /// empty page whose offset is `total`.
    @Test func anAnchorPastTheLastMatchGivesAnEmptyPageAtTotal() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let client = try await server.connect()
        let list = try await client.createList(name: "Anchors")
        let ok = try await client.patch(list.id, ops: [
            .insert(tempRef: 1, position: .end, fields: ItemFields(text: "a")),
            .insert(tempRef: 2, position: .end, fields: ItemFields(text: "b")),
            .insert(tempRef: 3, position: .end, fields: ItemFields(text: "c", checked: true)),
            .insert(tempRef: 4, position: .end, fields: ItemFields(text: "d", checked: true)),
        ])
        let third = try #require(ok.ids.first { $0.tempRef == 3 }).id
        let page = try await client.page(list.id, start: .anchor(third), limit: 10, filter: .unchecked)
        #expect(page.total == 2 && page.offset == 2 && page.items.isEmpty)
        await client.close()
    }

    /// Section 6.8: item ids count from 1 per list, consecutively in the
    /// order of a patch's INSERTs (with or without a temporary reference);
    /// deleted ids are not reused and a failed patch takes none.
    @Test func itemIDsArePerListConsecutiveAndNeverReused() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let client = try await server.connect()
        let first = try await client.createList(name: "First")
        let second = try await client.createList(name: "Second")
        try await client.patch(first.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "elsewhere"))])
        let ok = try await client.patch(second.id, ops: [
            .insert(tempRef: 1, position: .end, fields: ItemFields(text: "one")),
            .insert(tempRef: nil, position: .end, fields: ItemFields(text: "two")),
            .insert(tempRef: 2, position: .end, fields: ItemFields(text: "three")),
        ])
        #expect(ok.ids == [.init(tempRef: 1, id: ItemID(1)), .init(tempRef: 2, id: ItemID(3))])
        await #expect(throws: ClientError.self) {
            try await client.patch(second.id, ops: [
                .insert(tempRef: 1, position: .end, fields: ItemFields(text: "rolled back")),
                .setChecked(.id(ItemID(99)), true),
            ])
        }
        try await client.patch(second.id, ops: [.delete(.id(ItemID(3)))])
        let next = try await client.patch(second.id, ops: [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "four"))])
        #expect(next.ids == [.init(tempRef: 1, id: ItemID(4))])
        let page = try await client.page(second.id, limit: 10)
        #expect(page.items.map(\.id.rawValue) == [1, 2, 4])
        await client.close()
    }

    /// Section 6.11: SUBSCRIBED has the named lists in request order (a
    /// duplicate answered once, at its first place), then with scope 1 the
    /// namespace's other lists by ascending id.
    @Test func subscribedEntriesFollowTheRequestThenTheNamespace() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let client = try await server.connect()
        var ids: [ListID] = []
        for name in ["a", "b", "c", "d"] { ids.append(try await client.createList(name: name).id) }
        let missing = ListID(ids[3].rawValue + 1000)
        let named = try await client.subscribe([.init(list: ids[2]), .init(list: missing), .init(list: ids[0], revision: 1),
                                                .init(list: ids[2], revision: 0)])
        #expect(named.entries.map(\.list) == [ids[2], missing, ids[0]])
        #expect(named.entries.map(\.status) == [.live, .notFound, .live])
        let all = try await client.subscribe([.init(list: ids[3]), .init(list: missing)], allLists: true)
        #expect(all.entries.map(\.list) == [ids[3], missing, ids[0], ids[1], ids[2]])
        await client.close()
    }

    /// Section 6.13: the history of a list that an IMPORT replaced (same
    /// id) starts over with the import's OMITTED change. CHANGES_SINCE 0 is
    /// RESYNC_REQUIRED, not the old LIST_CREATED and PATCHED changes
    /// followed by OMITTED; the import's predecessor gets the OMITTED
    /// alone; a SUBSCRIBE from 0 gets no catch-up (RESYNC, or FETCH on a
    /// database, whose CHANGES_SINCE is RESYNC_REQUIRED). Both stores alike.
    @Test(arguments: TestStore.available, [Import.Mode.merge, .replace])
    func anImportThatReplacedAListStartsItsHistoryOver(store: TestStore, mode: Import.Mode) async throws {
        let server = try TestServer.start(store: store)
        defer { server.stop() }
        let client = try await server.connect()
        let list = try await client.createList(name: "Trip", icon: "Trips")
        try await client.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "Tickets"))])
        try await client.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "Hotel"))])
        #expect(try await client.changes(of: list.id, since: 0).changes.map(\.revision) == [1, 2, 3])
        // The snapshot holds the list at revision 3: it comes back at 4, right after the old history.
        let file = try await SnapshotTransferTests.export(client, lists: [list.id])
        let applied = try await SnapshotTransferTests.importFile(client, file, mode: mode)
        #expect(applied.renamed.isEmpty && applied.lists == 1)
        let error = await #expect(throws: ClientError.self) { _ = try await client.changes(of: list.id, since: 0) }
        #expect(error?.wireCode == .resyncRequired)
        #expect(error?.serverError?.revision == 4)
        let older = await #expect(throws: ClientError.self) { _ = try await client.changes(of: list.id, since: 2) }
        #expect(older?.wireCode == .resyncRequired)
        let restarted = try await client.changes(of: list.id, since: 3)
        #expect(restarted.revision == 4)
        #expect(restarted.changes == [ListChange(list: list.id, revision: 4, kind: .omitted)])
        let subscribed = try await client.subscribe([.init(list: list.id, revision: 0)])
        #expect(subscribed.entries.map(\.status) == [store == .postgres ? .fetch : .resync])
        #expect(subscribed.entries.map(\.revision) == [4])
        await client.close()
    }

    /// Section 6.13, after a restart: the history replayed from the log
    /// starts over at the import as it did before the restart.
    @Test func anImportedListsHistoryStartsOverAfterARestartToo() async throws {
        let directory = try TemporaryDirectory(prefix: "checklistd-import-history")
        defer { directory.remove() }
        let list: ListID
        do {
            let server = try TestServer.start(["--fsync", "always"], directory: directory)
            let client = try await server.connect()
            list = try await client.createList(name: "Trip", icon: "Trips").id
            try await client.patch(list, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "Tickets"))])
            let file = try await SnapshotTransferTests.export(client, lists: [list])
            try await SnapshotTransferTests.importFile(client, file)
            await client.close()
            server.crash()
        }
        let server = try TestServer.start(["--fsync", "always"], directory: directory)
        defer { server.stop() }
        let client = try await server.connect()
        let error = await #expect(throws: ClientError.self) { _ = try await client.changes(of: list, since: 0) }
        #expect(error?.wireCode == .resyncRequired && error?.serverError?.revision == 3)
        #expect(try await client.changes(of: list, since: 2).changes == [ListChange(list: list, revision: 3, kind: .omitted)])
        await client.close()
    }
}
