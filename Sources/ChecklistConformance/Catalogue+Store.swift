import ChecklistModel
import ChecklistFrames
import ChecklistWire

extension Catalogue {
    /// Sends a GET_PAGE and checks the PAGE's header and row count.
    static func expectPage(_ ctx: CaseContext, start: UInt64, rows: Int, total: UInt64) throws {
        let c = try ctx.connectReady()
        try c.send(.getPage(GetPage(list: ctx.fixture.list, start: .offset(start), limit: 10)), id: probe)
        let page = try c.receive(probe, "PAGE") { message -> PageMessage? in
            if case .page(let p) = message { return p }
            return nil
        }
        guard page.rows.count == rows, page.header.total == total, page.header.offset == start,
              page.header.revision == ctx.fixture.revision else {
            throw CaseFailure("expected a PAGE with \(rows) rows, total \(total), offset \(start), revision \(ctx.fixture.revision); "
                              + "got \(page.rows.count) rows, total \(page.header.total), offset \(page.header.offset), "
                              + "revision \(page.header.revision)")
        }
        try ctx.expectConnectionState(c)
    }

    static let store: [ConformanceCase] = [
        ConformanceCase("unknown-list-page", .store, "GET_PAGE of a list id never handed out",
                        .error(.notFound)) { ctx in
            try sendChecked(ctx, .getPage(GetPage(list: ctx.missingList, limit: 10)))
        },
        ConformanceCase("unknown-list-update", .store, "UPDATE_LIST of a list id never handed out",
                        .error(.notFound)) { ctx in
            try sendChecked(ctx, .updateList(UpdateList(list: ctx.missingList, name: "x")))
        },
        ConformanceCase("unknown-list-delete", .store, "DELETE_LIST of a list id never handed out",
                        .error(.notFound)) { ctx in
            try sendChecked(ctx, .deleteList(DeleteList(list: ctx.missingList)))
        },
        ConformanceCase("unknown-list-patch", .store, "PATCH of a list id never handed out",
                        .error(.notFound)) { ctx in
            try sendChecked(ctx, .patch(Patch(list: ctx.missingList, ops: [.toggle(.id(ItemID(1)))])))
        },
        ConformanceCase("unknown-item", .store, "PATCH: a valid SET_TEXT, then SET_CHECKED of an item id the list never had",
                        Outcome(error: .notFound, field: nil, connectionLevel: false,
                                answer: "nothing of the batch is applied", connection: .survives)) { ctx in
            try sendChecked(ctx, .patch(Patch(list: ctx.fixture.list, ops: [
                .setText(.id(ctx.fixture.items[0]), "changed"), .setChecked(.id(ctx.missingItem), true),
            ])))
        },
        ConformanceCase("unknown-anchor", .store, "GET_PAGE anchored at an item id the list never had",
                        .error(.notFound)) { ctx in
            try sendChecked(ctx, .getPage(GetPage(list: ctx.fixture.list, start: .anchor(ctx.missingItem), limit: 10)))
        },
        ConformanceCase("use-after-delete", .store, "PATCH: DELETE an item, then TOGGLE the same item",
                        Outcome(error: .notFound, field: nil, connectionLevel: false,
                                answer: "the DELETE is rolled back too", connection: .survives)) { ctx in
            let item = ItemRef.id(ctx.fixture.items[1])
            try sendChecked(ctx, .patch(Patch(list: ctx.fixture.list, ops: [.delete(item), .toggle(item)])))
        },
        ConformanceCase("offset-past-end", .store, "GET_PAGE at offset 1000 of a 3-row list",
                        .answer("`PAGE`: no rows, `total` 3, `offset` 1000")) { ctx in
            try expectPage(ctx, start: 1000, rows: 0, total: 3)
        },
        ConformanceCase("offset-max-varint", .store, "GET_PAGE at offset 2^64-1",
                        .answer("`PAGE`: no rows, `offset` 2^64-1")) { ctx in
            try expectPage(ctx, start: .max, rows: 0, total: 3)
        },
        ConformanceCase("move-past-end", .store, "MOVE of an item to `toIndex` 3 in a 3-row list",
                        .error(.badField, "toIndex")) { ctx in
            try sendChecked(ctx, .patch(Patch(list: ctx.fixture.list, ops: [.move(.id(ctx.fixture.items[0]), toIndex: 3)])))
        },
        ConformanceCase("insert-past-end", .store, "INSERT at `index` 4 in a 3-row list",
                        .error(.badField, "index")) { ctx in
            try sendChecked(ctx, .patch(Patch(list: ctx.fixture.list, ops: [
                .insert(tempRef: nil, position: .index(4), fields: ItemFields(text: "too far")),
            ])))
        },
        ConformanceCase("temp-ref-before-definition", .store,
                        "PATCH: SET_TEXT of temporary reference 1, then the INSERT declaring it",
                        .error(.badField, "ref")) { ctx in
            try sendChecked(ctx, .patch(Patch(list: ctx.fixture.list, ops: [
                .setText(.temp(1), "too early"),
                .insert(tempRef: 1, position: .end, fields: ItemFields(text: "declared")),
            ])))
        },
        ConformanceCase("duplicate-temp-ref", .store, "PATCH: two INSERTs declaring temporary reference 1",
                        .error(.badField, "tempRef")) { ctx in
            try sendChecked(ctx, .patch(Patch(list: ctx.fixture.list, ops: [
                .insert(tempRef: 1, position: .end, fields: ItemFields(text: "one")),
                .insert(tempRef: 1, position: .end, fields: ItemFields(text: "two")),
            ])))
        },
        ConformanceCase("stale-base-revision", .store, "PATCH with `baseRevision` one below the list's revision",
                        Outcome(error: .conflict, field: nil, connectionLevel: false,
                                answer: "`revision` = the current one; nothing applied", connection: .survives)) { ctx in
            let c = try ctx.connectReady()
            try c.send(.patch(Patch(list: ctx.fixture.list, baseRevision: ctx.fixture.revision - 1,
                                    ops: [.toggle(.id(ctx.fixture.items[0]))])), id: probe)
            let error = try c.expectError(probe, .conflict)
            guard error.revision == ctx.fixture.revision else {
                throw CaseFailure("CONFLICT should carry revision \(ctx.fixture.revision), carries \(String(describing: error.revision))")
            }
            try ctx.expectConnectionState(c)
        },
    ]
}
