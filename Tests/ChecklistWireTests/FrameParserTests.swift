import ChecklistModel
import ChecklistWire
import Testing

@Suite("Frame parser", .timeLimit(.minutes(10)))
struct FrameParserTests {
    /// Every vector split at every byte boundary: each strict prefix needs
    /// more bytes (or, for a wrong length, is refused as soon as the 4-byte
    /// prefix is in) and the whole gives the frame.
    @Test(arguments: GoldenVectors.names)
    func splitAtEveryByte(_ name: String) throws {
        let v = try GoldenVectors.load(name)
        let bytes = v.bytes
        let closes = v.error?.closesConnection ?? false
        for cut in 0..<bytes.count {
            let outcome = Codec.parse(bytes[..<cut], direction: v.direction, maxFrameBytes: v.limit)
            if closes && cut >= 4 {
                guard case .fatal(let e) = outcome else {
                    Issue.record("\(name): prefix of \(cut) bytes is not refused")
                    return
                }
                #expect(e.code.rawValue == v.error?.code)
            } else if !outcome.isNeedMore {
                Issue.record("\(name): prefix of \(cut) of \(bytes.count) bytes did not ask for more")
                return
            }
        }
        let whole = Codec.parse(bytes, direction: v.direction, maxFrameBytes: v.limit)
        if closes {
            guard case .fatal = whole else { Issue.record("\(name): not refused"); return }
        } else {
            #expect(whole.consumed == bytes.count, "\(name)")
        }
    }

    /// All valid vectors of one direction back to back, parsed from one
    /// buffer, and fed through a stream buffer in uneven chunks.
    @Test(arguments: [GoldenVector.Direction.request, .response])
    func concatenatedFrames(_ direction: GoldenVector.Direction) throws {
        let vectors = try GoldenVectors.all().filter { !$0.isMalformed && $0.direction == direction }
        #expect(vectors.count > 10)
        let stream = vectors.flatMap(\.bytes)

        // One buffer holding every frame.
        var offset = 0
        for v in vectors {
            let outcome = Codec.parse(stream[offset...], direction: direction)
            guard case .frame(let header, let consumed, .success(let decoded)) = outcome else {
                Issue.record("frame \(v.name) at offset \(offset): \(outcome)")
                return
            }
            #expect(header.requestID == v.frame?.request)
            #expect(decoded.json.fields == v.fields, "\(v.name)")
            offset += consumed
        }
        #expect(offset == stream.count)

        // The same stream arriving in chunks of 1, 2, 3, ... 17 bytes.
        var buffer: [UInt8] = []
        var received: [String] = []
        var position = 0
        var chunk = 1
        while position < stream.count {
            let end = min(stream.count, position + chunk)
            buffer += stream[position..<end]
            position = end
            chunk = chunk % 17 + 1
            while case .frame(_, let consumed, .success(let decoded)) = Codec.parse(buffer, direction: direction) {
                received.append(decoded.json.message)
                buffer.removeFirst(consumed)
            }
        }
        #expect(buffer.isEmpty)
        #expect(received == vectors.map { $0.message! })
    }

    @Test func lengthIsCheckedBeforeTheBodyArrives() {
        // 4 bytes announcing 4 MiB + 1: refused at once.
        #expect(fatalCode([0x00, 0x40, 0x00, 0x01], max: 4 << 20) == .frameTooLarge)
        // Exactly maxFrameBytes is allowed: it waits for the body.
        #expect(Codec.parse([0x00, 0x40, 0x00, 0x00], direction: .request).isNeedMore)
        #expect(fatalCode([0xFF, 0xFF, 0xFF, 0xFF], max: 4 << 20) == .frameTooLarge)
        #expect(fatalCode([0, 0, 0, 5], max: 4 << 20) == .malformedFrame)
        #expect(fatalCode([0, 0, 0, 0], max: 4 << 20) == .malformedFrame)
        #expect(fatalCode([0, 0, 0, 7], max: 6) == .frameTooLarge)
        // length 6: an empty body.
        let empty = Codec.parse([0, 0, 0, 6, 0x10, 0, 0, 0, 0, 1], direction: .request)
        guard case .frame(let header, 10, .success(.request(.listLists))) = empty else {
            Issue.record("\(empty)")
            return
        }
        #expect(header.requestID == 1)
    }

    @Test func headerFieldsAreBigEndian() {
        var w = WireWriter()
        var encoder = FrameEncoder()
        encoder.append(ListLists(), requestID: 0xA1B2_C3D4, to: &w)
        encoder.append(Ping(data: [9]), requestID: 0, to: &w)
        #expect(w.bytes == [0, 0, 0, 6, 0x10, 0, 0xA1, 0xB2, 0xC3, 0xD4,
                            0, 0, 0, 8, 0x02, 0, 0, 0, 0, 0, 1, 9])
        w.bytes.withUnsafeBytes { raw in
            guard case .frame(let h, let body, let consumed) = FrameParser.next(in: raw, maxFrameBytes: 64) else {
                Issue.record("no frame")
                return
            }
            #expect(h == FrameHeader(type: .listLists, requestID: 0xA1B2_C3D4))
            #expect(body == 10..<10 && consumed == 10)
        }
    }

    @Test func unknownFlagBitsAreBadField() throws {
        for flags: UInt8 in [0x02, 0x04, 0x80, 0xFF] {
            let frame: [UInt8] = [0, 0, 0, 7, 0x02, flags, 0, 0, 0, 5, 0]
            guard case .frame(_, _, .failure(let e)) = Codec.parse(frame, direction: .request) else {
                Issue.record("flags \(flags) accepted")
                continue
            }
            #expect(e.code == .badField && e.field == "flags")
        }
    }

    private func fatalCode(_ bytes: [UInt8], max: UInt32) -> ChecklistError.Code? {
        if case .fatal(let e) = Codec.parse(bytes, direction: .request, maxFrameBytes: max) { return e.code }
        return nil
    }

    /// A frame encoded with request id 0 and given its id afterwards (as the
    /// client does once the id is chosen) is the frame encoded with that id.
    @Test(arguments: [UInt32(1), 0x0102_0304, .max])
    func settingTheRequestIDAfterwardsGivesTheSameFrame(_ id: UInt32) {
        var late = WireWriter()
        var direct = WireWriter()
        var encoder = FrameEncoder(compress: false)
        Request.ping(Ping(data: [9, 8, 7])).encode(requestID: 0, into: &late, encoder: &encoder)
        Request.ping(Ping(data: [9, 8, 7])).encode(requestID: id, into: &direct, encoder: &encoder)
        FrameHeader.setRequestID(id, in: &late)
        #expect(late.bytes == direct.bytes)
        #expect(Array(late.bytes[FrameHeader.requestIDOffset..<FrameHeader.size]) ==
                [UInt8(id >> 24), UInt8(id >> 16 & 0xFF), UInt8(id >> 8 & 0xFF), UInt8(id & 0xFF)])
    }
}
