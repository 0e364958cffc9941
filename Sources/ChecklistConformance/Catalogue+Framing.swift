import ChecklistModel
import ChecklistFrames
import ChecklistWire

extension Catalogue {
    static let framing: [ConformanceCase] = [
        ConformanceCase("truncated-header", .framing,
                        "7 of the 10 header bytes of a frame, then the client ends its side (FIN)",
                        .answer("none", connection: .closed)) { ctx in
            let c = try ctx.connectReady()
            try c.send(Array(FrameBytes.request(.ping(Ping()), id: probe).prefix(7)))
            try c.shutdownSending()
            try ctx.expectOutcome(on: c, requestID: probe)
        },
        ConformanceCase("truncated-body", .framing,
                        "a CREATE_LIST header announcing 20 body bytes, 5 of them, then FIN",
                        .answer("none; nothing is created", connection: .closed)) { ctx in
            let c = try ctx.connectReady()
            let frame = FrameBytes.frame(type: MessageType.createList.rawValue, id: probe,
                                         body: Body().string("Half a list").string("No Icon").bytes)
            try c.send(Array(frame.prefix(FrameHeader.size + 5)))
            try c.shutdownSending()
            try ctx.expectOutcome(on: c, requestID: probe)
        },
        ConformanceCase("length-zero", .framing, "`length` 0 (just the 4-byte prefix)",
                        .closing(.malformedFrame)) { ctx in
            let c = try ctx.connectReady()
            try c.send([0, 0, 0, 0])
            try ctx.expectOutcome(on: c, requestID: 0)
        },
        ConformanceCase("length-below-header", .framing, "`length` 5, smaller than the 6 bytes of type, flags and request id",
                        .closing(.malformedFrame)) { ctx in
            let c = try ctx.connectReady()
            try c.send([0, 0, 0, 5, 0x02, 0, 0, 0, 0])
            try ctx.expectOutcome(on: c, requestID: 0)
        },
        ConformanceCase("length-over-limit", .framing,
                        "`length` `maxFrameBytes` + 1, only the 4-byte prefix sent (refused before the body arrives)",
                        .closing(.frameTooLarge)) { ctx in
            let c = try ctx.connectReady()
            try c.send(FrameBytes.be32(ctx.limits.maxFrameBytes + 1))
            try ctx.expectOutcome(on: c, requestID: 0)
        },
        ConformanceCase("length-max", .framing, "`length` 0xFFFFFFFF and a header, no body",
                        .closing(.frameTooLarge)) { ctx in
            let c = try ctx.connectReady()
            try c.send(FrameBytes.header(length: .max, type: MessageType.createList.rawValue, id: probe))
            try ctx.expectOutcome(on: c, requestID: 0)
        },
        ConformanceCase("unknown-type", .framing, "a request of type 0x7F, which no version defines",
                        .error(.unknownMessage)) { ctx in
            let c = try ctx.connectReady()
            try c.send(FrameBytes.frame(type: 0x7F, id: probe, body: [1, 2, 3]))
            try ctx.expectOutcome(on: c, requestID: probe)
        },
        ConformanceCase("response-type-as-request", .framing, "HELLO_OK (0x81) sent by the client",
                        .error(.unknownMessage)) { ctx in
            let c = try ctx.connectReady()
            let ok = HelloOK(version: 1, features: [], serverName: "x", limits: .default)
            try c.send(FrameBytes.frame(type: 0x81, id: probe, body: ok.encodedBody()))
            try ctx.expectOutcome(on: c, requestID: probe)
        },
        ConformanceCase("push-type-as-request", .framing, "a push type (0xE0) sent by the client",
                        .error(.unknownMessage)) { ctx in
            let c = try ctx.connectReady()
            try c.send(FrameBytes.frame(type: 0xE0, id: probe, body: []))
            try ctx.expectOutcome(on: c, requestID: probe)
        },
        ConformanceCase("error-type-as-request", .framing, "ERROR (0xFF) sent by the client",
                        .error(.unknownMessage)) { ctx in
            let c = try ctx.connectReady()
            try c.send(FrameBytes.frame(type: 0xFF, id: probe,
                                        body: ErrorMessage(ChecklistError(.internalError, "x")).encodedBody()))
            try ctx.expectOutcome(on: c, requestID: probe)
        },
        ConformanceCase("bad-flags", .framing, "a PING with flag bits 1-7 set (flags 0xFE)",
                        .error(.badField, "flags")) { ctx in
            let c = try ctx.connectReady()
            try c.send(FrameBytes.frame(type: MessageType.ping.rawValue, flags: 0xFE, id: probe, body: [0]))
            try ctx.expectOutcome(on: c, requestID: probe)
        },
        ConformanceCase("compressed-not-zlib", .framing, "a COMPRESSED CREATE_LIST whose body is not a zlib stream",
                        .error(.badField, "body")) { ctx in
            let c = try ctx.connectReady()
            try c.send(FrameBytes.frame(type: MessageType.createList.rawValue, flags: 1, id: probe,
                                        body: Array("this is not zlib".utf8)))
            try ctx.expectOutcome(on: c, requestID: probe)
        },
        ConformanceCase("zlib-bomb", .framing,
                        "a COMPRESSED CREATE_LIST of a few KiB that inflates past `maxFrameBytes`",
                        Outcome(error: .frameTooLarge, field: nil, connectionLevel: false,
                                answer: "the frame's own length was fine", connection: .survives)) { ctx in
            let c = try ctx.connectReady()
            let inflated = Body().string(String(repeating: "a", count: Int(ctx.limits.maxFrameBytes))).string("No Icon").bytes
            var packed: [UInt8] = []
            let fits = inflated.withUnsafeBytes { Zlib.compress($0, into: &packed, limit: 1 << 20, level: 9) }
            guard fits else { throw CaseFailure("could not build the compressed body") }
            try c.send(FrameBytes.frame(type: MessageType.createList.rawValue, flags: 1, id: probe, body: packed))
            try ctx.expectOutcome(on: c, requestID: probe)
        },
    ]
}
