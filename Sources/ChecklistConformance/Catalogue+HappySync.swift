import ChecklistModel
import ChecklistWire

// The happy path through the messages of live sync, operations and
// snapshots: STATS, SUBSCRIBE / CHANGE / UNSUBSCRIBE, CHANGES_SINCE, and an
// EXPORT imported back with IMPORT. Every case deletes what it creates.
extension Catalogue {
    static let happySync: [ConformanceCase] = [
        ConformanceCase("happy-stats", .happyPath, "STATS",
                        .answer("`STATS_REPORT` counting at least this connection and its requests")) { ctx in
            let c = try ctx.connectReady()
            let report = try call(c, .stats(Stats()), 10, "STATS_REPORT") { m -> StatsReport? in
                if case .statsReport(let r) = m { return r }
                return nil
            }
            try require(report.connectionsOpen >= 1 && report.connectionsTotal >= report.connectionsOpen,
                        "STATS_REPORT counts \(report.connectionsOpen) open of \(report.connectionsTotal) connections")
            try require(report.requests.contains { $0.type == .hello && $0.requests >= 1 }, "STATS_REPORT counts no HELLO")
        },
        ConformanceCase("happy-subscribe", .happyPath,
                        "SUBSCRIBE to a list, a PATCH of it on another connection, UNSUBSCRIBE",
                        .answer("`SUBSCRIBED` (`LIVE`), one `CHANGE` push (request id 0) with the new revision, `UNSUBSCRIBED`")) { ctx in
            let watcher = try ctx.connectReady()
            let writer = try ctx.connectReady()
            let list = try created(writer, "conformance subscribe", id: 10)
            let subscribed = try call(watcher, .subscribe(Subscribe(entries: [.init(list: list.id)])), 11, "SUBSCRIBED") { m -> Subscribed? in
                if case .subscribed(let s) = m { return s }
                return nil
            }
            try require(subscribed.entries.count == 1 && subscribed.entries[0].list == list.id
                        && subscribed.entries[0].status == .live && subscribed.entries[0].revision == list.revision,
                        "SUBSCRIBED answered \(subscribed.entries)")
            let ok = try patched(writer, Patch(list: list.id, ops: [
                .insert(tempRef: 1, position: .end, fields: ItemFields(text: "pushed")),
            ]), id: 12)
            let push = try watcher.receive(0, "CHANGE push") { m -> ListChange? in
                if case .changePush(let p) = m { return p.change }
                return nil
            }
            try require(push.list == list.id && push.revision == ok.revision, "the push is \(push)")
            guard case .patched(let ops) = push.kind, case .insert(_, 0, let fields)? = ops.first, fields.text == "pushed" else {
                throw CaseFailure("the push does not carry the insert: \(push.kind)")
            }
            _ = try call(watcher, .unsubscribe(Unsubscribe(lists: [list.id])), 13, "UNSUBSCRIBED") { m -> Bool? in
                if case .unsubscribed = m { return true }
                return nil
            }
            try deleted(writer, list.id, id: 14)
            // No push follows UNSUBSCRIBED: the next frame answers this PING.
            try watcher.expectAlive()
        },
        ConformanceCase("happy-changes-since", .happyPath, "CHANGES_SINCE revision 1 of a list changed twice",
                        .answer("`CHANGES`: the two changes, oldest first, and the current revision")) { ctx in
            let c = try ctx.connectReady()
            let list = try created(c, "conformance changes", id: 10)
            _ = try patched(c, Patch(list: list.id, ops: [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "a"))]), id: 11)
            let last = try patched(c, Patch(list: list.id, ops: [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "b"))]), id: 12)
            let changes = try call(c, .changesSince(ChangesSince(list: list.id, revision: 1, limit: 10)), 13, "CHANGES") { m -> Changes? in
                if case .changes(let ch) = m { return ch }
                return nil
            }
            try require(changes.list == list.id && changes.revision == last.revision
                        && changes.changes.map(\.revision) == [2, 3], "CHANGES answered \(changes.changes.map(\.revision))")
            try deleted(c, list.id, id: 14)
        },
        ConformanceCase("happy-export-import", .happyPath,
                        "EXPORT of a list in small chunks, deleting it, then IMPORT (MERGE) of the exported file",
                        .answer("`EXPORT_CHUNK`s up to `END`; `IMPORT_OK` `STARTED`, `RECEIVED`, `APPLIED`; the list is back with its rows")) { ctx in
            let c = try ctx.connectReady()
            let list = try created(c, "conformance export", id: 10)
            _ = try patched(c, Patch(list: list.id, ops: (1...20).map {
                .insert(tempRef: UInt64($0), position: .end, fields: ItemFields(text: "exported row \($0)", checked: $0 % 4 == 0))
            }), id: 11)
            let before = try page(c, GetPage(list: list.id, limit: 50), id: 12)
            var file: [UInt8] = []
            var request = Export(.start(chunkBytes: 256, lists: [list.id]))
            for sequence in UInt64(0)... {
                let chunk = try call(c, .export(request), UInt32(100 + sequence), "EXPORT_CHUNK \(sequence)") { m -> ExportChunk? in
                    if case .exportChunk(let chunk) = m { return chunk }
                    return nil
                }
                try require(chunk.sequence == sequence && chunk.data.count <= 256, "chunk \(sequence) is \(chunk.sequence), \(chunk.data.count) bytes")
                file += chunk.data
                if chunk.status == .end { break }
                try require(chunk.status == .more && sequence < 1000, "chunk \(sequence) has status \(chunk.status)")
                request = Export(.next(sequence: sequence + 1))
            }
            try require(file.count > 2 && file[0] == 0x1F && file[1] == 0x8B, "the export is not a gzip stream")
            try deleted(c, list.id, id: 13)

            try require(try importStep(c, .begin(mode: .merge), id: 20).status == .started, "BEGIN was not STARTED")
            let received = try importStep(c, .data(sequence: 1, bytes: file), id: 21)
            try require(received.status == .received && received.lists == 1 && received.items == 20, "DATA answered \(received)")
            let applied = try importStep(c, .end, id: 22)
            try require(applied.status == .applied && applied.lists == 1, "END answered \(applied)")
            // The deleted list's id is not handed out again: the import gives it a new one.
            let id = applied.renamed.first(where: { $0.from == list.id })?.to ?? list.id
            let after = try page(c, GetPage(list: id, limit: 50), id: 23)
            try require(after.rows == before.rows, "the imported rows differ from the exported ones")
            try deleted(c, id, id: 24)
        },
    ]
}
