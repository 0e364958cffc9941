import ChecklistModel
import ChecklistFrames
import ChecklistWire

extension Catalogue {
    static let handshake: [ConformanceCase] = [
        ConformanceCase("request-before-hello", .handshake, "LIST_LISTS before HELLO",
                        .error(.helloRequired)) { ctx in
            let c = try ctx.connect()
            try c.send(.listLists(ListLists()), id: probe)
            try c.expectError(probe, .helloRequired)
            try c.handshake(token: ctx.target.token)  // the connection stays usable
            try c.expectAlive()
        },
        ConformanceCase("patch-before-hello", .handshake, "a valid PATCH of an existing list before HELLO",
                        Outcome(error: .helloRequired, field: nil, connectionLevel: false,
                                answer: "nothing is applied", connection: .survives)) { ctx in
            let c = try ctx.connect()
            try c.send(.patch(Patch(list: ctx.fixture.list, ops: [.toggle(.id(ctx.fixture.items[0]))])), id: probe)
            try c.expectError(probe, .helloRequired)
            try c.handshake(token: ctx.target.token)
            try c.expectAlive()
        },
        ConformanceCase("second-hello", .handshake, "a second HELLO after a successful one",
                        .error(.badState)) { ctx in
            let c = try ctx.connectReady()
            try c.send(.hello(Hello(features: [], clientName: "again", token: ctx.target.token)), id: probe)
            try ctx.expectOutcome(on: c, requestID: probe)
        },
        ConformanceCase("unsupported-version", .handshake,
                        "HELLO offering versions 2 to 5 only (another HELLO may follow)",
                        .error(.unsupportedVersion, "minVersion")) { ctx in
            let c = try ctx.connect()
            try c.send(.hello(Hello(minVersion: 2, maxVersion: 5, features: [], clientName: "future", token: ctx.target.token)),
                       id: probe)
            try c.expectError(probe, .unsupportedVersion, field: "minVersion")
            try c.handshake(token: ctx.target.token)
            try c.expectAlive()
        },
        ConformanceCase("inverted-version-range", .handshake, "HELLO with `minVersion` 3 > `maxVersion` 1",
                        .error(.unsupportedVersion, "minVersion")) { ctx in
            let c = try ctx.connect()
            try c.send(.hello(Hello(minVersion: 3, maxVersion: 1, features: [], clientName: "confused", token: ctx.target.token)),
                       id: probe)
            try c.expectError(probe, .unsupportedVersion, field: "minVersion")
            try c.handshake(token: ctx.target.token)
            try c.expectAlive()
        },
        ConformanceCase("hello-unknown-presence", .handshake,
                        "HELLO whose presence byte sets bit 1 (not defined); the connection is still before HELLO",
                        .error(.badField, "presence")) { ctx in
            let c = try ctx.connect()
            try c.send(FrameBytes.frame(type: MessageType.hello.rawValue, id: probe,
                                        body: Body().varint(1).varint(1).varint(0).string("x").u8(0x02).string("t").bytes))
            try c.expectError(probe, .badField, field: "presence")
            try c.send(.listLists(ListLists()), id: probe + 1)
            try c.expectError(probe + 1, .helloRequired)
            try c.handshake(token: ctx.target.token)
            try c.expectAlive()
        },
        ConformanceCase("hello-truncated", .handshake, "HELLO whose body ends inside `clientName`",
                        .error(.badField, "clientName")) { ctx in
            let c = try ctx.connect()
            try c.send(FrameBytes.frame(type: MessageType.hello.rawValue, id: probe,
                                        body: Body().varint(1).varint(1).varint(0).varint(10).raw(Array("abc".utf8)).bytes))
            try c.expectError(probe, .badField, field: "clientName")
            try c.handshake(token: ctx.target.token)
            try c.expectAlive()
        },
        ConformanceCase("decoded-before-hello", .handshake,
                        "before HELLO, a frame of unknown type 0x7F, then a CREATE_LIST whose name is invalid UTF-8",
                        Outcome(error: .unknownMessage, field: nil, connectionLevel: false,
                                answer: "then `BAD_FIELD` `name`: a frame is decoded before `HELLO_REQUIRED` is considered",
                                connection: .survives)) { ctx in
            let c = try ctx.connect()
            try c.send(FrameBytes.frame(type: 0x7F, id: probe, body: [1, 2, 3]))
            try c.expectError(probe, .unknownMessage)
            try c.send(FrameBytes.frame(type: MessageType.createList.rawValue, id: probe + 1,
                                        body: Body().varint(2).raw([0x41, 0xFF]).string("No Icon").bytes))
            try c.expectError(probe + 1, .badField, field: "name")
            try c.handshake(token: ctx.target.token)
            try c.expectAlive()
        },
        ConformanceCase("compressed-hello", .handshake,
                        "a HELLO of 1,100 bytes sent COMPRESSED (a valid zlib stream); the connection is still before HELLO",
                        .error(.badField, "flags")) { ctx in
            let c = try ctx.connect()
            try c.send(FrameBytes.frame(type: MessageType.hello.rawValue, flags: 1, id: probe,
                                        body: try compressedBody(Body().varint(1).varint(1).varint(0)
                                            .string(String(repeating: "x", count: 1100)).bytes)))
            try c.expectError(probe, .badField, field: "flags")
            try c.handshake(token: ctx.target.token)
            try c.expectAlive()
        },
        ConformanceCase("compressed-before-hello", .handshake,
                        "a COMPRESSED PING (a valid zlib stream) before HELLO: the server has not announced COMPRESSION yet",
                        .error(.badField, "flags")) { ctx in
            let c = try ctx.connect()
            try c.send(FrameBytes.frame(type: MessageType.ping.rawValue, flags: 1, id: probe,
                                        body: try compressedBody(Body().varint(1000).raw([UInt8](repeating: 0x61, count: 1000)).bytes)))
            try c.expectError(probe, .badField, field: "flags")
            try c.handshake(token: ctx.target.token)
            try c.expectAlive()
        },
    ]

    /// `body` as a zlib stream (the COMPRESSED form of a frame body).
    static func compressedBody(_ body: [UInt8]) throws -> [UInt8] {
        var packed: [UInt8] = []
        let fits = body.withUnsafeBytes { Zlib.compress($0, into: &packed, limit: body.count + 64, level: 6) }
        guard fits else { throw CaseFailure("could not build the compressed body") }
        return packed
    }
}
