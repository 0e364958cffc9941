import ChecklistModel
import ChecklistTesting
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
    ]
}
