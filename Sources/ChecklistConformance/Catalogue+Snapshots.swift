import ChecklistModel
import ChecklistFrames
import ChecklistWire

extension Catalogue {
    /// Sends one IMPORT and returns its IMPORT_OK.
    static func importStep(_ c: FrameSocket, _ action: Import.Action, id: UInt32) throws -> ImportOK {
        try c.send(.import(Import(action)), id: id)
        return try c.receive(id, "IMPORT_OK") { m -> ImportOK? in
            if case .importOK(let ok) = m { return ok }
            return nil
        }
    }

    /// BEGIN (mode MERGE), then one DATA chunk holding `file`.
    static func beginAndSend(_ c: FrameSocket, _ file: [UInt8]) throws {
        let begun = try importStep(c, .begin(mode: .merge), id: probe - 2)
        try require(begun.status == .started, "BEGIN answered \(begun.status)")
        try c.send(.import(Import(.data(sequence: 1, bytes: file))), id: probe)
    }

    /// Expects the error that refuses a snapshot: `code`, `field`, and a
    /// message starting with the snapshot error's name (SPEC.md 6.17).
    static func expectRefusal(_ c: FrameSocket, id: UInt32, _ code: ChecklistError.Code, _ field: String,
                              _ name: String) throws {
        let error = try c.expectError(id, code, field: field)
        try require(error.message.hasPrefix(name), "the message should start with \(name): \(error.message)")
    }

    /// After a refused snapshot the import is over: END is `BAD_STATE`.
    static func expectImportOver(_ c: FrameSocket) throws {
        try c.send(.import(Import(.end)), id: probe + 1)
        try c.expectError(probe + 1, .badState)
    }

    /// A DATA chunk with a snapshot that DATA itself refuses.
    static func refusedAtData(_ ctx: CaseContext, _ file: [UInt8], _ code: ChecklistError.Code, _ field: String,
                              _ name: String) throws {
        let c = try ctx.connectReady()
        try beginAndSend(c, file)
        try expectRefusal(c, id: probe, code, field, name)
        try expectImportOver(c)
        try ctx.expectConnectionState(c)
    }

    /// Lists for a good snapshot, with ids no server has handed out.
    static func goodLists(_ ctx: CaseContext) -> [SnapshotBytes.List] {
        [SnapshotBytes.List(id: ctx.missingList.rawValue, name: "Imported", items: [(1, "one", false), (2, "two", true)])]
    }

    static func outcome(_ code: ChecklistError.Code, _ field: String, _ answer: String) -> Outcome {
        Outcome(error: code, field: field, connectionLevel: false, answer: answer, connection: .survives)
    }

    static let snapshots: [ConformanceCase] = [
        ConformanceCase("import-data-before-begin", .snapshots, "IMPORT DATA with no import begun",
                        .error(.badState)) { ctx in
            try sendChecked(ctx, .import(Import(.data(sequence: 1, bytes: [1, 2, 3]))))
        },
        ConformanceCase("import-second-begin", .snapshots, "IMPORT BEGIN while an import runs",
                        .error(.badState)) { ctx in
            let c = try ctx.connectReady()
            _ = try importStep(c, .begin(mode: .merge), id: 10)
            try c.send(.import(Import(.begin(mode: .replace))), id: probe)
            try ctx.expectOutcome(on: c, requestID: probe)
        },
        ConformanceCase("import-bad-mode", .snapshots, "IMPORT BEGIN with `mode` 2",
                        .error(.badField, "mode")) { ctx in
            try sendChecked(ctx, .import, [0x00, 0x02])
        },
        ConformanceCase("import-bad-action", .snapshots, "IMPORT with `action` 4",
                        .error(.badField, "action")) { ctx in
            try sendChecked(ctx, .import, [0x04])
        },
        ConformanceCase("import-sequence-gap", .snapshots, "IMPORT DATA with `sequence` 2 right after BEGIN",
                        .error(.badField, "sequence")) { ctx in
            let c = try ctx.connectReady()
            _ = try importStep(c, .begin(mode: .merge), id: 10)
            try c.send(.import(Import(.data(sequence: 2, bytes: SnapshotBytes(goodLists(ctx)).file))), id: probe)
            try ctx.expectOutcome(on: c, requestID: probe)
        },
        ConformanceCase("import-not-gzip", .snapshots, "IMPORT DATA whose bytes are not a gzip stream",
                        outcome(.badField, "data", "message `CORRUPT_SNAPSHOT ...`; the import is over (END: `BAD_STATE`)")) { ctx in
            try refusedAtData(ctx, Array("this is not a snapshot".utf8), .badField, "data", "CORRUPT_SNAPSHOT")
        },
        ConformanceCase("import-bad-magic", .snapshots, "IMPORT of a gzip stream whose content does not start with the magic",
                        outcome(.badField, "data", "`CORRUPT_SNAPSHOT ...`; nothing is applied")) { ctx in
            try refusedAtData(ctx, SnapshotBytes.gzip(Array("NOTCKSS! but long enough to be read".utf8)),
                              .badField, "data", "CORRUPT_SNAPSHOT")
        },
        ConformanceCase("import-bad-checksum", .snapshots, "IMPORT of a snapshot whose trailer CRC-32 is off by one",
                        outcome(.badField, "data", "`SNAPSHOT_CHECKSUM ...`; nothing is applied")) { ctx in
            let snapshot = SnapshotBytes(goodLists(ctx))
            try refusedAtData(ctx, SnapshotBytes.gzip(snapshot.content + snapshot.trailer(crcDelta: 1)),
                              .badField, "data", "SNAPSHOT_CHECKSUM")
        },
        ConformanceCase("import-bytes-after-trailer", .snapshots, "IMPORT of a snapshot with a record after its trailer",
                        outcome(.badField, "data", "`CORRUPT_SNAPSHOT ...`; nothing is applied")) { ctx in
            let snapshot = SnapshotBytes(goodLists(ctx))
            try refusedAtData(ctx, SnapshotBytes.gzip(snapshot.content + snapshot.trailer() + [0x40, 0x00]),
                              .badField, "data", "CORRUPT_SNAPSHOT")
        },
        ConformanceCase("import-truncated", .snapshots, "IMPORT of a snapshot file without its last 12 bytes, then END",
                        outcome(.badField, "data", "to END: `TRUNCATED_SNAPSHOT ...`; nothing is applied")) { ctx in
            let c = try ctx.connectReady()
            let file = SnapshotBytes(goodLists(ctx)).file
            try beginAndSend(c, Array(file.dropLast(12)))
            let received = try c.receive(probe, "IMPORT_OK RECEIVED") { m -> ImportOK? in
                if case .importOK(let ok) = m { return ok }
                return nil
            }
            try require(received.status == .received, "DATA answered \(received.status)")
            try c.send(.import(Import(.end)), id: probe + 1)
            try expectRefusal(c, id: probe + 1, .badField, "data", "TRUNCATED_SNAPSHOT")
            try ctx.expectConnectionState(c)
        },
        ConformanceCase("import-decompression-bomb", .snapshots,
                        "IMPORT of an 18 KiB snapshot whose extension records inflate to 18 MB (about 1000:1)",
                        outcome(.limitExceeded, "data", "`DECOMPRESSION_LIMIT ...`; nothing is applied")) { ctx in
            var snapshot = SnapshotBytes.headerOnly()
            let zeros = Body().raw([UInt8](repeating: 0, count: 60_000))
            for _ in 0..<300 { snapshot.record(0x40, zeros) }
            try refusedAtData(ctx, SnapshotBytes.gzip(snapshot.content + snapshot.trailer()),
                              .limitExceeded, "data", "DECOMPRESSION_LIMIT")
        },
        ConformanceCase("import-record-too-large", .snapshots, "IMPORT of a snapshot with a 2 MiB extension record",
                        outcome(.limitExceeded, "data", "`RECORD_TOO_LARGE ...`; nothing is applied")) { ctx in
            var snapshot = SnapshotBytes.headerOnly()
            snapshot.record(0x40, Body().raw([UInt8](repeating: 0x55, count: 2 << 20)))
            try refusedAtData(ctx, SnapshotBytes.gzip(snapshot.content + snapshot.trailer()),
                              .limitExceeded, "data", "RECORD_TOO_LARGE")
        },
        ConformanceCase("import-empty-name", .snapshots, "IMPORT of a snapshot holding a list with an empty name",
                        outcome(.badField, "name", "nothing is applied")) { ctx in
            var lists = goodLists(ctx)
            lists[0].name = ""
            let c = try ctx.connectReady()
            try beginAndSend(c, SnapshotBytes(lists).file)
            try c.expectError(probe, .badField, field: "name")
            try expectImportOver(c)
            try ctx.expectConnectionState(c)
        },
        ConformanceCase("import-text-too-long", .snapshots, "IMPORT of a snapshot holding an item text of `maxTextBytes` + 1 bytes",
                        outcome(.limitExceeded, "text", "nothing is applied")) { ctx in
            var lists = goodLists(ctx)
            lists[0].items[1].text = text(ctx.limits.maxTextBytes + 1)
            let c = try ctx.connectReady()
            try beginAndSend(c, SnapshotBytes(lists).file)
            try c.expectError(probe, .limitExceeded, field: "text")
            try expectImportOver(c)
            try ctx.expectConnectionState(c)
        },
        ConformanceCase("import-cancel", .snapshots, "IMPORT of a good snapshot, then CANCEL instead of END",
                        .answer("`IMPORT_OK` `CANCELLED`; nothing is applied")) { ctx in
            let c = try ctx.connectReady()
            try beginAndSend(c, SnapshotBytes(goodLists(ctx)).file)
            _ = try c.receive(probe, "IMPORT_OK RECEIVED") { m -> Bool? in
                if case .importOK(let ok) = m, ok.status == .received { return true }
                return nil
            }
            let cancelled = try importStep(c, .cancel, id: probe + 1)
            try require(cancelled.status == .cancelled, "CANCEL answered \(cancelled.status)")
            try ctx.expectConnectionState(c)
        },
        ConformanceCase("export-unknown-list", .snapshots, "EXPORT START of a list id never handed out",
                        .error(.notFound)) { ctx in
            try sendChecked(ctx, .export(Export(.start(chunkBytes: 0, lists: [ctx.fixture.list, ctx.missingList]))))
        },
        ConformanceCase("export-next-without-start", .snapshots, "EXPORT NEXT with no export running",
                        .error(.badState)) { ctx in
            try sendChecked(ctx, .export(Export(.next(sequence: 1))))
        },
        ConformanceCase("export-bad-sequence", .snapshots,
                        "EXPORT START with 16-byte chunks, then NEXT with `sequence` 5 instead of 1",
                        outcome(.badField, "sequence", "the export goes on (NEXT 1 answers chunk 1)")) { ctx in
            let c = try ctx.connectReady()
            try c.send(.export(Export(.start(chunkBytes: 16, lists: [ctx.fixture.list]))), id: 10)
            let first = try c.receive(10, "EXPORT_CHUNK 0") { m -> ExportChunk? in
                if case .exportChunk(let chunk) = m { return chunk }
                return nil
            }
            try require(first.sequence == 0 && first.status == .more && first.data.count <= 16,
                        "START answered chunk \(first.sequence), status \(first.status), \(first.data.count) bytes")
            try c.send(.export(Export(.next(sequence: 5))), id: probe)
            try c.expectError(probe, .badField, field: "sequence")
            try c.send(.export(Export(.next(sequence: 1))), id: probe + 1)
            _ = try c.receive(probe + 1, "EXPORT_CHUNK 1") { m -> Bool? in
                if case .exportChunk(let chunk) = m, chunk.sequence == 1 { return true }
                return nil
            }
            try c.send(.export(Export(.cancel)), id: probe + 2)
            _ = try c.receive(probe + 2, "EXPORT_CHUNK CANCELLED") { m -> Bool? in
                if case .exportChunk(let chunk) = m, chunk.status == .cancelled { return true }
                return nil
            }
            try ctx.expectConnectionState(c)
        },
    ]
}
