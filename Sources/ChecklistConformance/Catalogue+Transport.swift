import ChecklistModel
import ChecklistFrames
import ChecklistWire
#if canImport(Glibc)
import Glibc
#endif

extension Catalogue {
    /// Frames in the flood.
    static let floodFrames = 10_000

    /// Waits `duration` without sending anything: the subject of the idle
    /// cases, not a stand-in for readiness.
    static func stayIdle(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    static let transport: [ConformanceCase] = [
        ConformanceCase("pipelined-flood", .transport,
                        "10,000 frames in one stream without reading: PINGs, every 10th of an unknown type",
                        .answer("every frame answered, in order (PONG or `UNKNOWN_MESSAGE`)")) { ctx in
            let c = try ctx.connectReady()
            var bytes: [UInt8] = []
            bytes.reserveCapacity(floodFrames * 16)
            for i in 0..<floodFrames {
                let id = UInt32(1000 + i)
                if i % 10 == 9 {
                    bytes += FrameBytes.frame(type: 0x7F, id: id, body: [])
                } else {
                    bytes += FrameBytes.request(.ping(Ping(data: FrameBytes.be32(id))), id: id)
                }
            }
            let answers = try c.pump(bytes, expecting: floodFrames, deadline: .now + ctx.target.timeout * 6)
            for (i, answer) in answers.enumerated() {
                let id = UInt32(1000 + i)
                guard answer.header.requestID == id else {
                    throw CaseFailure("answer \(i) has request id \(answer.header.requestID), expected \(id)")
                }
                switch answer.message {
                case .pong(let p) where i % 10 != 9 && p.data == FrameBytes.be32(id): continue
                case .error(let e) where i % 10 == 9 && e.error.code == .unknownMessage: continue
                default: throw CaseFailure("answer \(i) (request \(id)) is \(answer.message.summary)")
                }
            }
            try ctx.expectConnectionState(c)
        },
        ConformanceCase("one-byte-writes", .transport,
                        "a GET_PAGE, then a frame with bad flags, sent one byte per write",
                        .answer("`PAGE`, then `BAD_FIELD` `flags`")) { ctx in
            let c = try ctx.connectReady()
            let page = FrameBytes.request(.getPage(GetPage(list: ctx.fixture.list, limit: 10)), id: probe)
            let bad = FrameBytes.frame(type: MessageType.ping.rawValue, flags: 0x04, id: probe + 1, body: [0])
            try c.sendOneByteAtATime(page + bad)
            let rows = try c.receive(probe, "PAGE") { message -> Int? in
                if case .page(let p) = message { return p.rows.count }
                return nil
            }
            guard rows == 3 else { throw CaseFailure("the PAGE has \(rows) rows, not 3") }
            try c.expectError(probe + 1, .badField, field: "flags")
            try ctx.expectConnectionState(c)
        },
        ConformanceCase("half-close-after-requests", .transport,
                        "3 PINGs, then the client ends its side (FIN) without waiting",
                        .answer("3 PONGs, then the server closes", connection: .closed)) { ctx in
            let c = try ctx.connectReady()
            var bytes: [UInt8] = []
            for id in UInt32(40)..<43 { bytes += FrameBytes.request(.ping(Ping(data: [UInt8(id)])), id: id) }
            try c.send(bytes)
            try c.shutdownSending()
            for id in UInt32(40)..<43 {
                _ = try c.receive(id, "PONG") { message -> Bool? in
                    if case .pong = message { return true }
                    return nil
                }
            }
            try ctx.expectConnectionState(c)
        },
        ConformanceCase("idle-before-hello", .transport,
                        "a connection silent for a while (2 s by default) before HELLO, then HELLO",
                        .answer("`HELLO_OK`")) { ctx in
            let c = try ctx.connect()
            stayIdle(ctx.target.idle)
            try c.handshake(token: ctx.target.token)
            try ctx.expectConnectionState(c)
        },
        ConformanceCase("idle-after-hello", .transport, "a connection idle after HELLO, then a PING",
                        .answer("`PONG`")) { ctx in
            let c = try ctx.connectReady()
            stayIdle(ctx.target.idle)
            try ctx.expectConnectionState(c)
        },
        ConformanceCase("idle-mid-frame", .transport, "5 bytes of a PING frame, a pause, then the rest",
                        .answer("`PONG` once the frame is whole")) { ctx in
            let c = try ctx.connectReady()
            let frame = FrameBytes.request(.ping(Ping(data: [7, 7])), id: probe)
            try c.send(Array(frame.prefix(5)))
            stayIdle(ctx.target.idle)
            try c.send(Array(frame.dropFirst(5)))
            _ = try c.receive(probe, "PONG") { message -> Bool? in
                if case .pong(let p) = message, p.data == [7, 7] { return true }
                return nil
            }
            try ctx.expectConnectionState(c)
        },
        ConformanceCase("reset-mid-frame", .transport,
                        "half of a valid PATCH frame, then the client resets the connection (RST)",
                        .answer("none; nothing is applied", connection: .abandoned)) { ctx in
            let c = try ctx.connectReady()
            let frame = FrameBytes.request(.patch(Patch(list: ctx.fixture.list, ops: [.toggle(.id(ctx.fixture.items[0]))])), id: probe)
            try c.send(Array(frame.prefix(frame.count / 2)))
            try ctx.expectConnectionState(c)
        },
        ConformanceCase("reset-with-unread-answers", .transport,
                        "1,000 PINGs and half a PATCH, then RST without reading any answer",
                        .answer("none; nothing is applied", connection: .abandoned)) { ctx in
            let c = try ctx.connectReady()
            var bytes: [UInt8] = []
            for i in 0..<1000 { bytes += FrameBytes.request(.ping(Ping(data: [UInt8(truncatingIfNeeded: i)])), id: UInt32(100 + i)) }
            let patch = FrameBytes.request(.patch(Patch(list: ctx.fixture.list, ops: [.toggle(.id(ctx.fixture.items[0]))])), id: probe)
            try c.send(bytes + patch.prefix(patch.count - 1))
            try ctx.expectConnectionState(c)
        },
    ]
}
