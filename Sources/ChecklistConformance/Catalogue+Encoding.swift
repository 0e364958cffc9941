import ChecklistModel
import ChecklistFrames
import ChecklistWire

extension Catalogue {
    /// A PATCH body of the fixture list, no base revision, whose ops are `ops`.
    static func patchBody(_ ctx: CaseContext, count: UInt64 = 1, _ ops: Body) -> [UInt8] {
        Body().varint(ctx.fixture.list.rawValue).u8(0).varint(count).raw(ops.bytes).bytes
    }

    /// Sends one frame of `type` with `body` on a ready connection and checks the outcome.
    static func sendChecked(_ ctx: CaseContext, _ type: MessageType, _ body: [UInt8]) throws {
        let c = try ctx.connectReady()
        try c.send(FrameBytes.frame(type: type.rawValue, id: probe, body: body))
        try ctx.expectOutcome(on: c, requestID: probe)
    }

    static let encoding: [ConformanceCase] = [
        ConformanceCase("invalid-utf8", .encoding, "CREATE_LIST whose name holds the byte 0xFF",
                        .error(.badField, "name")) { ctx in
            try sendChecked(ctx, .createList, Body().varint(4).raw([0x47, 0x72, 0xFF, 0x65]).string("No Icon").bytes)
        },
        ConformanceCase("overlong-utf8", .encoding, "CREATE_LIST whose name is the overlong encoding C0 AF of `/`",
                        .error(.badField, "name")) { ctx in
            try sendChecked(ctx, .createList, Body().varint(2).raw([0xC0, 0xAF]).string("No Icon").bytes)
        },
        ConformanceCase("utf8-surrogate", .encoding, "SET_TEXT whose text is a UTF-16 surrogate (ED A0 80)",
                        .error(.badField, "text")) { ctx in
            try sendChecked(ctx, .patch, patchBody(ctx, Body().u8(2).item(ctx.fixture.items[0]).varint(3).raw([0xED, 0xA0, 0x80])))
        },
        ConformanceCase("truncated-string", .encoding, "CREATE_LIST whose name announces 9 bytes and has 4",
                        .error(.badField, "name")) { ctx in
            try sendChecked(ctx, .createList, Body().varint(9).raw(Array("Groc".utf8)).bytes)
        },
        ConformanceCase("missing-field", .encoding, "CREATE_LIST whose body ends before `icon`",
                        .error(.badField, "icon")) { ctx in
            try sendChecked(ctx, .createList, Body().string("Groceries").bytes)
        },
        ConformanceCase("varint-11-bytes", .encoding, "DELETE_LIST whose `list` varint has 11 bytes",
                        .error(.badField, "list")) { ctx in
            try sendChecked(ctx, .deleteList, [UInt8](repeating: 0x80, count: 10) + [0x01])
        },
        ConformanceCase("varint-overflow", .encoding, "DELETE_LIST whose 10-byte varint has 0x02 as 10th byte (over 64 bits)",
                        .error(.badField, "list")) { ctx in
            try sendChecked(ctx, .deleteList, [UInt8](repeating: 0xFF, count: 9) + [0x02])
        },
        ConformanceCase("varint-truncated", .encoding, "GET_PAGE whose body ends inside the `limit` varint",
                        .error(.badField, "limit")) { ctx in
            try sendChecked(ctx, .getPage, Body().varint(ctx.fixture.list.rawValue).u8(0).u8(0).varint(0).raw([0xE8]).bytes)
        },
        ConformanceCase("max-varint-id", .encoding,
                        "DELETE_LIST of list 2^64-1 (the varint a client writing -1 sends)",
                        .error(.notFound)) { ctx in
            try sendChecked(ctx, .deleteList, Body().varint(.max).bytes)
        },
        ConformanceCase("bad-bool", .encoding, "SET_CHECKED with `checked` 0x02",
                        .error(.badField, "checked")) { ctx in
            try sendChecked(ctx, .patch, patchBody(ctx, Body().u8(3).item(ctx.fixture.items[0]).u8(2)))
        },
        ConformanceCase("unknown-presence", .encoding, "UPDATE_LIST with presence bit 2 (not defined)",
                        .error(.badField, "presence")) { ctx in
            try sendChecked(ctx, .updateList, Body().varint(ctx.fixture.list.rawValue).u8(0x04).string("x").bytes)
        },
        ConformanceCase("filter-out-of-range", .encoding, "GET_PAGE with `filter` 3",
                        .error(.badField, "filter")) { ctx in
            try sendChecked(ctx, .getPage, Body().varint(ctx.fixture.list.rawValue).u8(3).u8(0).varint(0).varint(10).bytes)
        },
        ConformanceCase("start-kind-out-of-range", .encoding, "GET_PAGE with `startKind` 3",
                        .error(.badField, "startKind")) { ctx in
            try sendChecked(ctx, .getPage, Body().varint(ctx.fixture.list.rawValue).u8(0).u8(3).varint(0).varint(10).bytes)
        },
        ConformanceCase("unknown-opcode", .encoding, "PATCH operation with opcode 0x0B",
                        .error(.badField, "opcode")) { ctx in
            try sendChecked(ctx, .patch, patchBody(ctx, Body().u8(0x0B).item(ctx.fixture.items[0])))
        },
        ConformanceCase("insert-where-out-of-range", .encoding, "INSERT with `where` 3",
                        .error(.badField, "where")) { ctx in
            try sendChecked(ctx, .patch, patchBody(ctx, Body().u8(1).varint(0).u8(3).u8(0).string("x")))
        },
        ConformanceCase("item-flags", .encoding, "INSERT whose item `flags` set bit 5",
                        .error(.badField, "flags")) { ctx in
            try sendChecked(ctx, .patch, patchBody(ctx, Body().u8(1).varint(0).u8(2).u8(0x20).string("x")))
        },
        ConformanceCase("ops-count-past-body", .encoding,
                        "PATCH announcing 100 operations in a body that holds one",
                        .error(.badField, "ops")) { ctx in
            try sendChecked(ctx, .patch, patchBody(ctx, count: 100, Body().u8(4).item(ctx.fixture.items[0])))
        },
    ]
}
