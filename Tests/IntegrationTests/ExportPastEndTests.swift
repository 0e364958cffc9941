import ChecklistClient
import ChecklistModel
import ChecklistWire
import Testing

/// Protocol/SPEC.md section 6.16: a NEXT a client pipelined past an
/// export's END chunk is answered with another END chunk, not an error, so
/// an export leaves no error in STATS (and `/metrics`).
@Suite(.timeLimit(.minutes(10)))
struct ExportPastEndTests {
    /// The client library keeps a window of NEXTs in flight: after a whole
    /// export, STATS counts EXPORT requests and no EXPORT error, no
    /// BAD_STATE at all.
    @Test func anExportLeavesNoErrorInStats() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let client = try await server.connect()
        let list = try await client.createList(name: "Export", icon: "Inbox")
        try await client.patch(list.id, ops: (0..<50).map { i in
            .insert(tempRef: nil, position: .end, fields: ItemFields(text: "item \(i) of the exported list"))
        })
        var file: [UInt8] = []
        let summary = try await client.exportSnapshot(chunkBytes: 64, window: 4) { file += $0 }
        #expect(summary.chunks > 4 && summary.items == 50)
        let stats = try await client.stats()
        let export = try #require(stats.requests.first { $0.type == .export })
        #expect(export.requests > UInt64(summary.chunks))
        #expect(export.errors == 0)
        #expect(!stats.errors.contains { $0.code == .badState })
        await client.close()
    }

    /// Byte level: NEXTs past the END chunk get END chunks of their
    /// sequence with the final counts and no data; one at or below END's,
    /// one after a CANCEL, and one on a connection that never exported are
    /// BAD_STATE.
    @Test func aNextPastTheEndIsAnsweredWithAnotherEnd() throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        _ = try connection.handshake()
        try connection.send(.createList(CreateList(name: "Small", icon: "")), id: 2)
        _ = try connection.receive()
        try connection.send(.export(Export(.start(chunkBytes: 0, lists: []))), id: 3)
        guard case .exportChunk(let only) = try connection.receive().message else { throw TestFailure("expected EXPORT_CHUNK") }
        #expect(only.sequence == 0 && only.status == .end)
        for (id, sequence) in [(4, 1), (5, 2)] as [(UInt32, UInt64)] {
            try connection.send(.export(Export(.next(sequence: sequence))), id: id)
            let (header, message) = try connection.receive()
            #expect(header.requestID == id)
            #expect(message == .exportChunk(ExportChunk(sequence: sequence, status: .end, listCount: only.listCount,
                                                       itemCount: only.itemCount, itemsWritten: only.itemsWritten,
                                                       rawBytes: only.rawBytes, data: [])))
        }
        try connection.send(.export(Export(.next(sequence: 0))), id: 6)
        #expect(try connection.receiveError().error.code == .badState)
        try connection.send(.export(Export(.cancel)), id: 7)
        guard case .exportChunk(let cancelled) = try connection.receive().message else { throw TestFailure("expected EXPORT_CHUNK") }
        #expect(cancelled.status == .cancelled)
        try connection.send(.export(Export(.next(sequence: 3))), id: 8)
        #expect(try connection.receiveError().error.code == .badState)

        let fresh = try RawConnection(port: server.port)
        _ = try fresh.handshake()
        try fresh.send(.export(Export(.next(sequence: 1))), id: 2)
        #expect(try fresh.receiveError().error.code == .badState)
    }
}
