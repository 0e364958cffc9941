import ChecklistModel
import ChecklistFrames
import ChecklistWire

extension Catalogue {
    static func text(_ bytes: UInt32) -> String { String(repeating: "x", count: Int(bytes)) }

    static func sendChecked(_ ctx: CaseContext, _ request: Request) throws {
        let c = try ctx.connectReady()
        try c.send(request, id: probe)
        try ctx.expectOutcome(on: c, requestID: probe)
    }

    static let limits: [ConformanceCase] = [
        ConformanceCase("name-too-long", .limits, "CREATE_LIST whose name is `maxTextBytes` + 1 bytes",
                        .error(.limitExceeded, "name")) { ctx in
            try sendChecked(ctx, .createList(CreateList(name: text(ctx.limits.maxTextBytes + 1), icon: "No Icon")))
        },
        ConformanceCase("icon-too-long", .limits, "UPDATE_LIST whose icon is `maxTextBytes` + 1 bytes",
                        .error(.limitExceeded, "icon")) { ctx in
            try sendChecked(ctx, .updateList(UpdateList(list: ctx.fixture.list, icon: text(ctx.limits.maxTextBytes + 1))))
        },
        ConformanceCase("item-text-too-long", .limits,
                        "PATCH: a valid SET_CHECKED, then an INSERT whose text is `maxTextBytes` + 1 bytes",
                        Outcome(error: .limitExceeded, field: "text", connectionLevel: false,
                                answer: "nothing of the batch is applied", connection: .survives)) { ctx in
            try sendChecked(ctx, .patch(Patch(list: ctx.fixture.list, ops: [
                .setChecked(.id(ctx.fixture.items[0]), true),
                .insert(tempRef: 1, position: .end, fields: ItemFields(text: text(ctx.limits.maxTextBytes + 1))),
            ])))
        },
        ConformanceCase("empty-name", .limits, "CREATE_LIST with an empty name",
                        .error(.badField, "name")) { ctx in
            try sendChecked(ctx, .createList(CreateList(name: "", icon: "No Icon")))
        },
        ConformanceCase("limit-zero", .limits, "GET_PAGE with `limit` 0",
                        .error(.badField, "limit")) { ctx in
            try sendChecked(ctx, .getPage(GetPage(list: ctx.fixture.list, limit: 0)))
        },
        ConformanceCase("limit-over-max", .limits, "GET_PAGE with `limit` `maxPageRows` + 1",
                        .error(.limitExceeded, "limit")) { ctx in
            try sendChecked(ctx, .getPage(GetPage(list: ctx.fixture.list, limit: UInt64(ctx.limits.maxPageRows) + 1)))
        },
        ConformanceCase("limit-max-varint", .limits, "GET_PAGE with `limit` 2^64-1",
                        .error(.limitExceeded, "limit")) { ctx in
            try sendChecked(ctx, .getPage(GetPage(list: ctx.fixture.list, limit: .max)))
        },
        ConformanceCase("empty-batch", .limits, "PATCH with 0 operations",
                        .error(.badField, "ops")) { ctx in
            try sendChecked(ctx, .patch(Patch(list: ctx.fixture.list, ops: [])))
        },
        ConformanceCase("batch-over-limit", .limits, "PATCH of `maxBatchOps` + 1 valid TOGGLE operations",
                        Outcome(error: .limitExceeded, field: "ops", connectionLevel: false,
                                answer: "nothing is applied", connection: .survives)) { ctx in
            let ops = [PatchOperation](repeating: .toggle(.id(ctx.fixture.items[0])), count: Int(ctx.limits.maxBatchOps) + 1)
            try sendChecked(ctx, .patch(Patch(list: ctx.fixture.list, ops: ops)))
        },
        ConformanceCase("ping-too-long", .limits, "PING with 1025 bytes of data",
                        .error(.limitExceeded, "data")) { ctx in
            try sendChecked(ctx, .ping(Ping(data: [UInt8](repeating: 0xAB, count: 1025))))
        },
        ConformanceCase("client-key-too-long", .limits, "PATCH: SET_KEY giving an item a 65-byte client key",
                        .error(.limitExceeded, "clientKey")) { ctx in
            try sendChecked(ctx, .patch(Patch(list: ctx.fixture.list, ops: [
                .setKey(.id(ctx.fixture.items[0]), String(repeating: "k", count: ClientKey.maxBytes + 1)),
            ])))
        },
        ConformanceCase("client-key-duplicate", .limits, "PATCH: two INSERTs with the same client key",
                        Outcome(error: .duplicateKey, field: "clientKey", connectionLevel: false,
                                answer: "nothing of the batch is applied", connection: .survives)) { ctx in
            let fields = ItemFields(text: "x", clientKey: "conformance-key")
            try sendChecked(ctx, .patch(Patch(list: ctx.fixture.list, ops: [
                .insert(tempRef: nil, position: .end, fields: fields),
                .insert(tempRef: nil, position: .end, fields: fields),
            ])))
        },
    ]
}
