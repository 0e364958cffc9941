import ChecklistClient
import ChecklistModel
import ChecklistSnapshot
import ChecklistSocket
import ChecklistTesting
import ChecklistWire
import Foundation
import Testing

/// EXPORT and IMPORT chunks are worked on off the event loops
/// (Protocol/SPEC.md sections 6.16-6.17): other connections of the same
/// loop are answered meanwhile, while the transferring connection's own
/// answers keep request order, and a connection that goes away, or a
/// server that stops, while a chunk is being made is handled cleanly.
@Suite(.timeLimit(.minutes(10))) struct TransferOffLoopTests {
    /// A snapshot of `items` items with hexadecimal texts, which compress
    /// poorly: exporting them again takes real work per chunk.
    static func bulkySnapshot(items: Int, lists: Int = 2) throws -> [UInt8] {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func hex(_ count: Int) -> String {
            var text = ""
            while text.utf8.count < count {
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                text += String(seed >> 1, radix: 16)
            }
            return String(text.prefix(count))
        }
        let perList = items / lists
        return try SnapshotTransferTests.snapshot((0..<lists).map { l in
            SnapshotTransferTests.list(UInt64(l + 1), items: (0..<perList).map { i in
                Item(id: ItemID(UInt64(i + 1)), fields: ItemFields(text: hex(48), checked: i % 3 == 0))
            }, name: "Bulky \(l)", next: UInt64(perList + 1))
        }, level: 1)
    }

    /// Whether `fd` has bytes to read (or was closed) right now.
    static func readable(_ fd: Int32) -> Bool {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&pfd, 1, 0) > 0
    }

    static func expectChunk(_ raw: RawConnection, id: UInt32) throws -> ExportChunk {
        let (header, message) = try raw.receive()
        guard header.requestID == id, case .exportChunk(let chunk) = message else {
            throw TestFailure("expected EXPORT_CHUNK for request \(id), got \(message) for \(header.requestID)")
        }
        return chunk
    }

    /// A server with one event loop (and `extra` arguments) holding a list
    /// of 60,000 bulky rows: its export chunks take long to make.
    static func oneLoopServerWithBulkyList(_ extra: [String] = []) async throws -> TestServer {
        let server = try TestServer.start(["--threads", "1"] + extra)
        let file = try bulkySnapshot(items: 60_000)
        let loader = try await server.connect()
        try await SnapshotTransferTests.importFile(loader, file)
        await loader.close()
        return server
    }

    /// With one event loop, another connection's PINGs are answered while a
    /// chunk of an export is being made. Ordering, not timing: a PONG counts
    /// when it arrived before the first byte of the outstanding chunk's
    /// answer. A server making the chunk on the loop answers at most one
    /// such PING per chunk (one handled in the same event batch before the
    /// EXPORT, flushed just before it); later ones are read after the chunk
    /// was written.
    @Test func otherConnectionsAreAnsweredWhileAnExportChunkIsMade() async throws {
        let server = try await Self.oneLoopServerWithBulkyList()
        defer { server.stop() }

        let port = server.port
        let pongsPerChunk = try await BlockingWork.run { () throws -> [Int] in
            let exporter = try RawConnection(port: port)
            let pinger = try RawConnection(port: port)
            try exporter.handshake()
            try pinger.handshake()
            var counts: [Int] = []
            var pingID: UInt32 = 1000
            var sequence: UInt64 = 0
            try exporter.send(.export(Export(.start(chunkBytes: 256 << 10, lists: []))), id: 10)
            while true {
                // PING the other connection until the chunk's answer starts.
                var pongs = 0
                while !Self.readable(exporter.fd) {
                    pingID += 1
                    try pinger.send(.ping(Ping(data: [1, 2, 3])), id: pingID)
                    let (header, message) = try pinger.receive()
                    guard header.requestID == pingID, case .pong = message else {
                        throw TestFailure("expected PONG \(pingID), got \(message)")
                    }
                    if !Self.readable(exporter.fd) { pongs += 1 }
                }
                counts.append(pongs)
                let chunk = try Self.expectChunk(exporter, id: UInt32(10 + sequence))
                guard chunk.sequence == sequence else { throw TestFailure("chunk \(chunk.sequence), expected \(sequence)") }
                if chunk.status == .end { break }
                sequence += 1
                try exporter.send(.export(Export(.next(sequence: sequence))), id: UInt32(10 + sequence))
            }
            exporter.finish()
            pinger.finish()
            return counts
        }
        #expect(pongsPerChunk.count >= 3, "the export should take several chunks: \(pongsPerChunk)")
        #expect(pongsPerChunk.filter { $0 >= 2 }.count * 2 >= pongsPerChunk.count,
                "PINGs answered while a chunk was outstanding, per chunk: \(pongsPerChunk)")
    }

    /// Requests pipelined behind IMPORT DATA, END and EXPORT chunks on the
    /// same connection are answered after them, in request order; a request
    /// after END sees the import applied.
    @Test func requestsPipelinedBehindAChunkAreAnsweredAfterIt() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let file = try Self.bulkySnapshot(items: 20_000)
        let port = server.port
        let answers = try await BlockingWork.run { () throws -> ([UInt32], [Int], [ImportOK.Status], [ExportChunk.Status]) in
            let raw = try RawConnection(port: port)
            try raw.handshake()
            let third = file.count / 3
            let pieces = [Array(file[..<third]), Array(file[third..<(2 * third)]), Array(file[(2 * third)...])]
            let requests: [(UInt32, Request)] = [
                (10, .import(Import(.begin(mode: .merge)))),
                (11, .import(Import(.data(sequence: 1, bytes: pieces[0])))),
                (12, .ping(Ping())),
                (13, .listLists(ListLists())),
                (14, .import(Import(.data(sequence: 2, bytes: pieces[1])))),
                (15, .ping(Ping())),
                (16, .import(Import(.data(sequence: 3, bytes: pieces[2])))),
                (17, .import(Import(.end))),
                (18, .listLists(ListLists())),
                (19, .export(Export(.start(chunkBytes: 64 << 10, lists: [])))),
                (20, .ping(Ping())),
                (21, .export(Export(.next(sequence: 1)))),
                (22, .listLists(ListLists())),
                (23, .export(Export(.cancel))),
                (24, .ping(Ping())),
            ]
            // All in one write: the server reads them as fast as it likes.
            var bytes = WireWriter()
            var encoder = FrameEncoder()
            for (id, request) in requests { request.encode(requestID: id, into: &bytes, encoder: &encoder) }
            try raw.send(bytes.bytes)

            // Every answer in request order, each one right.
            var ids: [UInt32] = []
            var lists: [Int] = []
            var importStatuses: [ImportOK.Status] = []
            var chunkStatuses: [ExportChunk.Status] = []
            for _ in requests {
                let (header, message) = try raw.receive()
                ids.append(header.requestID)
                switch message {
                case .importOK(let ok): importStatuses.append(ok.status)
                case .lists(let l): lists.append(l.lists.count)
                case .exportChunk(let chunk): chunkStatuses.append(chunk.status)
                case .pong: break
                default: throw TestFailure("request \(header.requestID) was answered \(message)")
                }
            }
            raw.finish()
            return (ids, lists, importStatuses, chunkStatuses)
        }
        #expect(answers.0 == Array(10...24))
        // Before END nothing is applied; after it, the two lists are there.
        #expect(answers.1 == [0, 2, 2])
        #expect(answers.2 == [.started, .received, .received, .received, .applied])
        #expect(answers.3 == [.more, .more, .cancelled])
    }

    /// Connections that go away while a worker holds their chunk (an
    /// IMPORT DATA, an EXPORT chunk), by a reset or a plain close: the
    /// server goes on serving, and the imports' places are freed (one
    /// worker, so the chunks wait in its queue too).
    @Test func connectionsClosedWhileAWorkerHoldsTheirChunkFreeTheirPlaces() async throws {
        // Debug logs tell when an import's place is given back.
        let server = try await Self.oneLoopServerWithBulkyList(["--transfer-threads", "1", "--log-level", "debug"])
        defer { server.stop() }
        let file = try Self.bulkySnapshot(items: 60_000)
        let loader = try await server.connect()

        let port = server.port
        let logged = server.process.standardErrorCount
        try await BlockingWork.run {
            // Both import places taken, each with a chunk sent, and an export.
            var leaving: [RawConnection] = []
            for _ in 0..<2 {
                let raw = try RawConnection(port: port)
                try raw.handshake()
                try raw.send(.import(Import(.begin(mode: .merge))), id: 2)
                guard case .importOK(let ok) = try raw.receive().1, ok.status == .started else {
                    throw TestFailure("BEGIN was refused")
                }
                try raw.send(.import(Import(.data(sequence: 1, bytes: file))), id: 3)
                leaving.append(raw)
            }
            let exporter = try RawConnection(port: port)
            try exporter.handshake()
            try exporter.send(.export(Export(.start(chunkBytes: 0, lists: []))), id: 2)
            leaving.append(exporter)
            // The first goes with a reset (linger 0), the others with a FIN.
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            _ = setsockopt(leaving[0].fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            leaving.removeAll()  // closes them
        }
        // The places come back once the worker lets go of the streams (a
        // chunk it had begun is finished first): then two imports may begin.
        let process = server.process
        #expect(try await BlockingWork.run {
            process.waitForStandardError(containing: "importsRunning=0", after: logged, timeout: .seconds(60))
        }, "an import place was not freed")
        var importers: [ChecklistConnection] = []
        for _ in 0..<2 {
            let next = try await server.connect()
            guard case .importOK(let ok) = try await next.send(.import(Import(.begin(mode: .merge)))) else {
                throw TestFailure("IMPORT BEGIN was not answered with IMPORT_OK")
            }
            #expect(ok.status == .started)
            importers.append(next)
        }
        // Everything is still served, the store untouched by the dropped imports.
        let lists = try await loader.lists()
        #expect(lists.map(\.itemCount) == [30_000, 30_000])
        for importer in importers { await importer.close() }
        await loader.close()
        #expect(server.process.stop() == .exited(0))
    }

    /// SIGTERM while a chunk is being made: the answer to that request
    /// (already read) still comes, then the goodbye, then the close; the
    /// server exits 0.
    @Test func shutdownAnswersTheChunkBeingMadeThenSaysGoodbye() async throws {
        let server = try await Self.oneLoopServerWithBulkyList()
        defer { server.stop() }

        let port = server.port
        let process = server.process
        let chunk = try await BlockingWork.run { () throws -> ExportChunk in
            let raw = try RawConnection(port: port)
            try raw.handshake()
            // One write: once PING's answer is here, START has been read
            // too (the server answers a batch after handling all of it).
            var bytes = WireWriter()
            var encoder = FrameEncoder()
            Request.ping(Ping()).encode(requestID: 5, into: &bytes, encoder: &encoder)
            Request.export(Export(.start(chunkBytes: 0, lists: []))).encode(requestID: 6, into: &bytes, encoder: &encoder)
            try raw.send(bytes.bytes)
            guard case .pong = try raw.receive().1 else { throw TestFailure("expected PONG") }
            process.send(signal: SIGTERM)
            let chunk = try Self.expectChunk(raw, id: 6)
            let (requestID, goodbye) = try raw.receiveError()
            guard requestID == 0, goodbye.code == .shuttingDown else {
                throw TestFailure("expected the goodbye, got \(goodbye) for \(requestID)")
            }
            guard try raw.isClosedByServer() else { throw TestFailure("the server did not close") }
            return chunk
        }
        #expect(chunk.sequence == 0 && chunk.status == .more && !chunk.data.isEmpty)
        #expect(server.process.waitForExit(timeout: .seconds(20)) == .exited(0))
    }
}
