import ChecklistClient
import ChecklistModel
import ChecklistWire
import Testing

/// Exact bytes against the real server: the handshake rules and bad input,
/// each checked against a second connection that must keep working and data
/// that must stay unchanged.
@Suite(.timeLimit(.minutes(10))) struct RawProtocolTests {
    @Test func requestBeforeHelloIsRefusedAndTheConnectionStays() throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        try raw.send(.listLists(ListLists()), id: 7)
        let (id, error) = try raw.receiveError()
        #expect(id == 7 && error.code == .helloRequired)
        try raw.handshake()
        try raw.send(.hello(Hello(clientName: "again")), id: 8)
        let (id2, again) = try raw.receiveError()
        #expect(id2 == 8 && again.code == .badState)
    }

    @Test func unsupportedVersionsAreNamedAndAnotherHelloMayFollow() throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        try raw.send(.hello(Hello(minVersion: 2, maxVersion: 5, clientName: "future")), id: 3)
        let (id, error) = try raw.receiveError()
        #expect(id == 3 && error.code == .unsupportedVersion)
        #expect(error.message.contains("1...1"))
        try raw.handshake()
    }

    @Test func unknownMessageTypeLeavesTheConnectionUsable() throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        try raw.handshake()
        try raw.send([0, 0, 0, 8, 0x5E, 0, 0, 0, 0, 9, 0xAB, 0xCD])
        let (id, error) = try raw.receiveError()
        #expect(id == 9 && error.code == .unknownMessage)
        try raw.send(.ping(Ping(data: [1, 2, 3])), id: 10)
        let (header, answer) = try raw.receive()
        #expect(header.requestID == 10 && answer == .pong(Pong(data: [1, 2, 3])))
    }

    @Test(arguments: [
        ([0, 0, 0, 2, 0x02, 0], ChecklistError.Code.malformedFrame),
        ([0xFF, 0xFF, 0xFF, 0xF0], ChecklistError.Code.frameTooLarge),
    ] as [([UInt8], ChecklistError.Code)])
    func lostFramingClosesOnlyThatConnection(bytes: [UInt8], code: ChecklistError.Code) async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let good = try await server.connect()
        let list = try await good.createList(name: "Safe", icon: "Inbox")
        _ = try await good.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "keep me"))])

        let bad = try RawConnection(port: server.port)
        try bad.handshake()
        try bad.send(bytes)
        let (id, error) = try bad.receiveError()
        #expect(id == 0 && error.code == code)
        #expect(try bad.isClosedByServer())

        let page = try await good.page(list.id, limit: 10, filter: .all)
        #expect(page.items.map(\.text) == ["keep me"] && page.revision == 2)
        await good.close()
    }

    @Test func badBodiesAreAnsweredAndTheNextFrameIsRead() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        try raw.handshake()
        // CREATE_LIST whose name is invalid UTF-8 (0xFF), then one with an
        // unknown flag bit, then a good PING: two errors, then the PONG.
        try raw.send([0, 0, 0, 10, 0x11, 0, 0, 0, 0, 21, 0x01, 0xFF, 0x01, 0x41])
        try raw.send([0, 0, 0, 7, 0x02, 0x80, 0, 0, 0, 22, 0x00])
        try raw.send(.ping(Ping()), id: 23)
        let first = try raw.receiveError()
        #expect(first.requestID == 21 && first.error.code == .badField && first.error.field == "name")
        let second = try raw.receiveError()
        #expect(second.requestID == 22 && second.error.code == .badField && second.error.field == "flags")
        let (header, answer) = try raw.receive()
        #expect(header.requestID == 23 && answer == .pong(Pong()))
        let client = try await server.connect()
        #expect(try await client.lists().isEmpty)
        await client.close()
    }

    @Test func aFrameSentOneByteAtATimeIsAnswered() throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        try raw.handshake()
        var w = WireWriter()
        var encoder = FrameEncoder()
        encoder.append(CreateList(name: "Trickle", icon: "Inbox"), requestID: 5, to: &w)
        for byte in w.bytes { try raw.send([byte]) }
        let (header, answer) = try raw.receive()
        guard case .listCreated(let info) = answer else { throw TestFailure("expected LIST, got \(answer)") }
        #expect(header.requestID == 5 && info.summary.name == "Trickle")
    }
}
