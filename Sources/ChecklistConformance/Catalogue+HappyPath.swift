import ChecklistModel
import ChecklistFrames
import ChecklistWire

extension Catalogue {
    /// Sends `request` and returns the answer, which `check` must accept.
    static func call<T>(_ c: FrameSocket, _ request: Request, _ id: UInt32, _ what: String,
                        _ check: (ServerMessage) -> T?) throws -> T {
        try c.send(request, id: id)
        return try c.receive(id, what, check)
    }

    static func created(_ c: FrameSocket, _ name: String, id: UInt32) throws -> ListSummary {
        try call(c, .createList(CreateList(name: name, icon: "Inbox")), id, "LIST (0x91)") { m -> ListSummary? in
            if case .listCreated(let info) = m { return info.summary }
            return nil
        }
    }

    static func patched(_ c: FrameSocket, _ patch: Patch, id: UInt32) throws -> PatchOK {
        try call(c, .patch(patch), id, "PATCH_OK") { m -> PatchOK? in
            if case .patchOK(let ok) = m { return ok }
            return nil
        }
    }

    static func page(_ c: FrameSocket, _ request: GetPage, id: UInt32) throws -> PageMessage {
        try call(c, .getPage(request), id, "PAGE") { m -> PageMessage? in
            if case .page(let p) = m { return p }
            return nil
        }
    }

    static func deleted(_ c: FrameSocket, _ list: ListID, id: UInt32) throws {
        _ = try call(c, .deleteList(DeleteList(list: list)), id, "LIST_DELETED") { m -> Bool? in
            if case .listDeleted(let d) = m, d.list == list { return true }
            return nil
        }
    }

    static func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw CaseFailure(message()) }
    }

    static let happyPath: [ConformanceCase] = [
        ConformanceCase("happy-hello-ping", .happyPath, "HELLO, then PINGs with 0, 3 and 1024 bytes of data",
                        .answer("`HELLO_OK` (version 1, limits), each PONG echoing its data")) { ctx in
            let c = try ctx.connect()
            let ok = try c.handshake(token: ctx.target.token)
            try require(ok.version == 1, "HELLO_OK chose version \(ok.version)")
            try require(ok.limits.maxFrameBytes >= 1024 && ok.limits.maxPageRows >= 1 && ok.limits.maxBatchOps >= 1,
                        "HELLO_OK announces unusable limits \(ok.limits)")
            for (i, data) in [[], [1, 2, 3], [UInt8](repeating: 0x5A, count: 1024)].enumerated() {
                _ = try call(c, .ping(Ping(data: data)), UInt32(10 + i), "PONG") { m -> Bool? in
                    if case .pong(let p) = m, p.data == data { return true }
                    return nil
                }
            }
        },
        ConformanceCase("happy-lists", .happyPath,
                        "CREATE_LIST (UTF-8 name), LIST_LISTS, UPDATE_LIST (name, icon, both, neither), DELETE_LIST",
                        .answer("`LIST` at revisions 1 to 5, `LISTS` showing it, `LIST_DELETED` revision 6")) { ctx in
            let c = try ctx.connectReady()
            let list = try created(c, "Café ☕ conformance", id: 10)
            try require(list.revision == 1 && list.itemCount == 0 && list.name == "Café ☕ conformance",
                        "CREATE_LIST answered \(list)")
            let shown = try call(c, .listLists(ListLists()), 11, "LISTS") { m -> [ListSummary]? in
                if case .lists(let l) = m { return l.lists }
                return nil
            }
            try require(shown.contains(list), "LIST_LISTS does not show the new list")
            try require(shown.map(\.id) == shown.map(\.id).sorted(), "LIST_LISTS is not ordered by id")
            let updates: [(String?, String?)] = [("Renamed", nil), (nil, "Trips"), ("Both", "Chores"), (nil, nil)]
            for (i, (name, icon)) in updates.enumerated() {
                let summary = try call(c, .updateList(UpdateList(list: list.id, name: name, icon: icon)), UInt32(20 + i),
                                       "LIST (0x92)") { m -> ListSummary? in
                    if case .listUpdated(let info) = m { return info.summary }
                    return nil
                }
                try require(summary.revision == Revision(2 + i), "UPDATE_LIST \(i + 1) answered revision \(summary.revision)")
                if let name { try require(summary.name == name, "the name is \(summary.name), not \(name)") }
                if let icon { try require(summary.icon == icon, "the icon is \(summary.icon), not \(icon)") }
            }
            _ = try call(c, .deleteList(DeleteList(list: list.id)), 30, "LIST_DELETED revision 6") { m -> Bool? in
                if case .listDeleted(let d) = m, d.list == list.id, d.revision == 6 { return true }
                return nil
            }
        },
        ConformanceCase("happy-patch-every-opcode", .happyPath,
                        "one PATCH with every opcode, temporary references and `baseRevision`, read back with GET_PAGE",
                        .answer("`PATCH_OK` with the new ids; the rows as the operations left them")) { ctx in
            let c = try ctx.connectReady()
            let list = try created(c, "conformance every opcode", id: 10)
            let seed = try patched(c, Patch(list: list.id, ops: [
                .insert(tempRef: 1, position: .end, fields: ItemFields(text: "keep")),
                .insert(tempRef: 2, position: .end, fields: ItemFields(text: "doomed")),
            ]), id: 11)
            let keep = seed.ids[0].id, doomed = seed.ids[1].id
            let ok = try patched(c, Patch(list: list.id, baseRevision: seed.revision, ops: [
                .insert(tempRef: 7, position: .index(0), fields: ItemFields(text: "first", price: -250)),
                .insert(tempRef: 8, position: .after(.temp(7)), fields: ItemFields(text: "second", checked: true)),
                .insert(tempRef: nil, position: .after(.id(keep)), fields: ItemFields(text: "after keep", due: 1_714_554_000, remind: true)),
                .setText(.id(keep), "kept ✓"),
                .setChecked(.temp(7), true),
                .toggle(.temp(8)),
                .setDue(.temp(8), -14_182_940),
                .setRemind(.temp(8), true),
                .setPrice(.temp(7), nil),
                .setPrice(.id(keep), 499),
                .delete(.id(doomed)),
                .move(.temp(7), toIndex: 3),
            ]), id: 12)
            try require(ok.revision == seed.revision + 1, "the revision went from \(seed.revision) to \(ok.revision)")
            try require(ok.ids.map(\.tempRef) == [7, 8], "PATCH_OK pairs \(ok.ids)")
            let first = ok.ids[0].id, second = ok.ids[1].id
            let rows = try page(c, GetPage(list: list.id, limit: 10), id: 13)
            let expected: [Item] = [
                Item(id: second, fields: ItemFields(text: "second", checked: false, due: -14_182_940, remind: true)),
                Item(id: keep, fields: ItemFields(text: "kept ✓", price: 499)),
                Item(id: rows.rows.count > 2 ? rows.rows[2].id : ItemID(0),
                     fields: ItemFields(text: "after keep", due: 1_714_554_000, remind: true)),
                Item(id: first, fields: ItemFields(text: "first", checked: true)),
            ]
            try require(rows.rows == expected && rows.header.revision == ok.revision && rows.header.total == 4,
                        "the rows are \(rows.rows), expected \(expected)")
            try deleted(c, list.id, id: 14)
        },
        ConformanceCase("happy-pages", .happyPath,
                        "GET_PAGE of a 10-row list by offset and by anchor, with each filter",
                        .answer("`PAGE`s with the filtered `total`, `offset` and rows")) { ctx in
            let c = try ctx.connectReady()
            let list = try created(c, "conformance pages", id: 10)
            let ops = (0..<10).map { i in
                PatchOperation.insert(tempRef: UInt64(i + 1), position: .end, fields: ItemFields(text: "row \(i)", checked: i % 2 == 1))
            }
            let ids = try patched(c, Patch(list: list.id, ops: ops), id: 11).ids.sorted { $0.tempRef < $1.tempRef }.map(\.id)
            let all = try page(c, GetPage(list: list.id, filter: .all, start: .offset(2), limit: 3), id: 12)
            try require(all.header.total == 10 && all.header.offset == 2 && all.rows.map(\.id) == Array(ids[2..<5]),
                        "all rows from offset 2: \(all.rows.map(\.id))")
            let checked = try page(c, GetPage(list: list.id, filter: .checked, start: .offset(1), limit: 2), id: 13)
            try require(checked.header.total == 5 && checked.rows.map(\.id) == [ids[3], ids[5]],
                        "checked rows from offset 1: \(checked.rows.map(\.id))")
            let anchored = try page(c, GetPage(list: list.id, filter: .unchecked, start: .anchor(ids[3]), limit: 2), id: 14)
            try require(anchored.header.total == 5 && anchored.header.offset == 2 && anchored.rows.map(\.id) == [ids[4], ids[6]],
                        "unchecked rows from anchor \(ids[3]) (checked): offset \(anchored.header.offset), \(anchored.rows.map(\.id))")
            let last = try page(c, GetPage(list: list.id, start: .offset(8), limit: 5), id: 15)
            try require(last.rows.map(\.id) == [ids[8], ids[9]], "the last page holds \(last.rows.map(\.id))")
            try deleted(c, list.id, id: 16)
        },
        ConformanceCase("happy-compression", .happyPath,
                        "HELLO with COMPRESSION, a COMPRESSED PATCH of 100 inserts, then GET_PAGE of 100 rows",
                        .answer("`PATCH_OK` with 100 ids; the `PAGE` (compressed or not) holds every row")) { ctx in
            let c = try ctx.connect()
            try c.send(.hello(Hello(features: [.compression], clientName: "conformance/compression", token: ctx.target.token)),
                       id: 1)
            let ok = try c.receive(1, "HELLO_OK") { m -> HelloOK? in
                if case .helloOK(let ok) = m { return ok }
                return nil
            }
            let list = try created(c, "conformance compression", id: 10)
            let ops = (1...100).map { i in
                PatchOperation.insert(tempRef: UInt64(i), position: .end, fields: ItemFields(text: "compressible row number \(i)"))
            }
            var w = WireWriter()
            var encoder = FrameEncoder(compress: ok.features.contains(.compression))
            Request.patch(Patch(list: list.id, ops: ops)).encode(requestID: 11, into: &w, encoder: &encoder)
            if ok.features.contains(.compression) {
                try require(w.bytes[5] == FrameFlags.compressed.rawValue, "the PATCH did not compress")
            }
            try c.send(w.bytes)
            let patchOK = try c.receive(11, "PATCH_OK") { m -> PatchOK? in
                if case .patchOK(let ok) = m { return ok }
                return nil
            }
            try require(patchOK.ids.count == 100, "PATCH_OK has \(patchOK.ids.count) ids")
            let rows = try page(c, GetPage(list: list.id, limit: 100), id: 12)
            try require(rows.rows.map(\.text) == (1...100).map { "compressible row number \($0)" }, "the PAGE rows differ")
            try deleted(c, list.id, id: 13)
        },
    ]
}
