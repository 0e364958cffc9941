import ChecklistModel
import ChecklistWire
import Foundation
import Testing

/// The golden vectors of Protocol/vectors, written by an independent encoder
/// from SPEC.md alone, checked against the Swift codec in both directions.
@Suite("Golden vectors", .timeLimit(.minutes(10)))
struct GoldenVectorTests {
    @Test func vectorsAreBundled() throws {
        #expect(GoldenVectors.directory != nil, "the test target copies Protocol/vectors")
        #expect(GoldenVectors.validNames.count >= 50)
        #expect(GoldenVectors.malformedNames.count >= 8)
        for v in try GoldenVectors.all() {
            #expect(GoldenVectors.names.contains(v.name), "file name and `name` of \(v.name) differ")
            #expect(v.isMalformed == v.name.hasPrefix("malformed-"), "\(v.name)")
            #expect(v.isMalformed == (v.fields == nil), "\(v.name): exactly one of fields and error")
        }
    }

    /// Protocol/vectors/README.md names every vector by its file name, so
    /// a reader of the README finds them all.
    @Test func theREADMENamesEveryVector() throws {
        let url = try #require(GoldenVectors.directory?.appendingPathComponent("README.md"))
        let readme = try String(contentsOf: url, encoding: .utf8)
        for name in GoldenVectors.names {
            #expect(readme.contains("`\(name)`"), "README.md does not list \(name)")
        }
    }

    /// Decode the bytes and compare with the meaning; encode the meaning and
    /// compare with the bytes.
    @Test(arguments: GoldenVectors.validNames)
    func validVector(_ name: String) throws {
        let v = try GoldenVectors.load(name)
        let bytes = v.bytes
        let (header, decoded) = try Codec.decodeOne(bytes, direction: v.direction, maxFrameBytes: v.limit)
        let frame = try #require(v.frame)
        #expect(GoldenVector.Frame(type: header.type.rawValue, flags: header.flags.rawValue, request: header.requestID) == frame)

        // decode(hex) == meaning
        let (message, fields) = decoded.json
        #expect(message == v.message)
        #expect(fields == v.fields, "decoded \(fields)\nexpected \(v.fields!)")

        // meaning → codec value: the same value the decoder produced
        let meaning = try DecodedMessage.from(v)
        #expect(meaning == decoded)

        switch v.encodeCheck ?? .exact {
        case .exact:
            #expect(meaning.encoded(requestID: frame.request).hex == v.hex)
        case .canonical:
            let canonical = try #require(v.canonicalHex)
            #expect(canonical != v.hex)
            #expect(meaning.encoded(requestID: frame.request).hex == canonical)
            // The canonical form decodes to the same meaning.
            let (_, again) = try Codec.decodeOne([UInt8](hex: canonical)!, direction: v.direction)
            #expect(again == decoded)
        case .roundtrip:
            // zlib output is not unique: encode with compression, decode, compare meanings.
            #expect(frame.flags & FrameFlags.compressed.rawValue != 0)
            let plain = meaning.encoded(requestID: frame.request)
            #expect(plain.count - FrameHeader.size == v.inflatedBodyBytes)
            let packed = meaning.encoded(requestID: frame.request, compress: true)
            #expect(packed[5] == FrameFlags.compressed.rawValue, "a body of \(plain.count - 10) bytes compresses")
            #expect(packed.count < plain.count)
            let (packedHeader, again) = try Codec.decodeOne(packed, direction: v.direction)
            #expect(packedHeader.requestID == frame.request && packedHeader.type.rawValue == frame.type)
            #expect(again == decoded)
            // Without compression the encoder writes the plain frame, which decodes the same.
            let (_, plainAgain) = try Codec.decodeOne(plain, direction: v.direction)
            #expect(plainAgain == decoded)
        }
    }

    /// Malformed frames produce exactly the documented error, and a frame
    /// whose body is wrong is skipped whole.
    @Test(arguments: GoldenVectors.malformedNames)
    func malformedVector(_ name: String) throws {
        let v = try GoldenVectors.load(name)
        let expected = try #require(v.error)
        let bytes = v.bytes
        #expect(ChecklistError.Code(rawValue: expected.code).name == expected.name)
        switch Codec.parse(bytes, direction: v.direction, maxFrameBytes: v.limit) {
        case .needMore:
            Issue.record("\(name): the parser wants more bytes")
        case .fatal(let error):
            #expect(expected.closesConnection, "\(name): \(error) closes the connection")
            #expect(error.code.rawValue == expected.code, "\(name): got \(error)")
            #expect(error.field == expected.field)
        case .frame(let header, let consumed, let result):
            #expect(!expected.closesConnection, "\(name): the parser found a frame")
            #expect(consumed == bytes.count, "the frame is skipped whole")
            if let frame = v.frame {
                #expect(frame == GoldenVector.Frame(type: header.type.rawValue, flags: header.flags.rawValue,
                                                    request: header.requestID))
            }
            switch result {
            case .success(let message):
                Issue.record("\(name) decoded as \(message.json.message) \(message.json.fields)")
            case .failure(let error):
                #expect(error.code.rawValue == expected.code, "\(name): got \(error)")
                #expect(error.field == expected.field, "\(name): got \(error)")
                // The error can be answered: it encodes as an ERROR frame.
                let answer = DecodedMessage.server(.error(ErrorMessage(error))).encoded(requestID: header.requestID)
                let (_, back) = try Codec.decodeOne(answer, direction: .response)
                #expect(back == .server(.error(ErrorMessage(error))))
            }
            // The connection stays usable: the next frame is read normally.
            let ping = DecodedMessage.request(.ping(Ping(data: [1, 2, 3]))).encoded(requestID: 99)
            let next = Codec.parse((bytes + ping).dropFirst(consumed), direction: .request)
            guard case .frame(let h, _, .success(.request(.ping(let p)))) = next else {
                Issue.record("the frame after \(name) did not parse")
                return
            }
            #expect(h.requestID == 99 && p.data == [1, 2, 3])
        }
    }

    /// Every message type the codec decodes, in each direction, has a vector.
    /// The known types are found by asking the decoders about all 256 types.
    @Test func everyMessageTypeHasAVector() throws {
        let vectors = try GoldenVectors.all().filter { !$0.isMalformed }
        for direction in [GoldenVector.Direction.request, .response] {
            let covered = Set(vectors.filter { $0.direction == direction }.compactMap { $0.frame?.type })
            var known: [UInt8] = []
            for type in UInt8.min...UInt8.max {
                let frame: [UInt8] = [0, 0, 0, 6, type, 0, 0, 0, 0, 1]
                if case .frame(_, _, .failure(let e)) = Codec.parse(frame, direction: direction), e.code == .unknownMessage {
                    continue
                }
                known.append(type)
            }
            #expect(known.count == (direction == .request ? 14 : 17))
            for type in known {
                #expect(covered.contains(type), "no \(direction) vector for type 0x\(String(type, radix: 16))")
            }
        }
    }

    /// Every PATCH opcode, INSERT position and optional-field combination
    /// appears in some vector.
    @Test func patchVectorsCoverEveryOperation() throws {
        var seen = Set<String>()
        for v in try GoldenVectors.all() where v.message == "PATCH" && !v.isMalformed {
            let decoded = try DecodedMessage.from(v)
            guard case .request(.patch(let patch)) = decoded else { continue }
            if patch.baseRevision != nil { seen.insert("baseRevision") }
            for op in patch.ops {
                switch op {
                case let .insert(temp, position, fields):
                    switch position {
                    case .index: seen.insert("insert-index")
                    case .after(.id): seen.insert("insert-after-id")
                    case .after(.temp): seen.insert("insert-after-temp")
                    case .end: seen.insert("insert-end")
                    }
                    seen.insert(temp == nil ? "insert-no-temp" : "insert-temp")
                    seen.insert(fields.due == nil ? "insert-no-due" : "insert-due")
                    seen.insert(fields.price == nil ? "insert-no-price" : "insert-price")
                    if let price = fields.price, price < 0 { seen.insert("insert-negative-price") }
                    if fields.clientKey != nil { seen.insert("insert-key") }
                case .setText: seen.insert("setText")
                case .setChecked(_, let c): seen.insert("setChecked-\(c)")
                case .toggle: seen.insert("toggle")
                case .setDue(_, let due): seen.insert(due == nil ? "setDue-absent" : "setDue-present")
                case .setRemind(_, let r): seen.insert("setRemind-\(r)")
                case .setPrice(_, let price): seen.insert(price == nil ? "setPrice-absent" : "setPrice-present")
                case .setKey(_, let key): seen.insert(key == nil ? "setKey-absent" : "setKey-present")
                case .delete: seen.insert("delete")
                case .move: seen.insert("move")
                }
            }
        }
        let wanted: Set<String> = [
            "baseRevision", "insert-index", "insert-after-id", "insert-after-temp", "insert-end",
            "insert-no-temp", "insert-temp", "insert-no-due", "insert-due", "insert-no-price", "insert-price",
            "insert-negative-price", "setText", "setChecked-true", "setChecked-false", "toggle",
            "setDue-absent", "setDue-present", "setRemind-true", "setRemind-false",
            "setPrice-absent", "setPrice-present", "delete", "move",
            "insert-key", "setKey-absent", "setKey-present",
        ]
        #expect(wanted.subtracting(seen).isEmpty, "missing: \(wanted.subtracting(seen).sorted())")
    }

    /// The figures SPEC.md section 6 quotes under **Row**.
    @Test func rowOverheadMeasurement() throws {
        let v = try GoldenVectors.load("page-100-rows")
        let (_, decoded) = try Codec.decodeOne(v.bytes, direction: .response)
        guard case .server(.page(let page)) = decoded else { Issue.record("not a PAGE"); return }
        #expect(page.rows.count == 100)
        #expect(page.rows.map(\.id.rawValue) == Array(1...100))
        #expect(page.rows.allSatisfy { $0.text.utf8.count == 30 && $0.fields.due == nil && $0.fields.price == nil })
        let frameBytes = v.bytes.count
        let textBytes = page.rows.reduce(0) { $0 + $1.text.utf8.count }
        let m = try #require(v.measurement)
        #expect(try m.uint("frameBytes") == UInt64(frameBytes))
        #expect(try m.uint("bodyBytes") == UInt64(frameBytes - FrameHeader.size))
        #expect(try m.uint("textBytes") == UInt64(textBytes))
        // As quoted in SPEC.md: 3,305 body bytes, a 3,315-byte frame, 3,000
        // bytes of text, 3.15 bytes of overhead per row.
        #expect(frameBytes - FrameHeader.size == 3305)
        #expect(frameBytes == 3315)
        #expect(textBytes == 3000)
        #expect(frameBytes - textBytes == 315)
        // Each row: 1 byte id (ids < 128), 1 byte flags, 1 byte text length.
        #expect(PageMessage(list: ListID(2), revision: 101, total: 100, offset: 0, rows: [page.rows[0]]).encodedBody().count == 5 + 33)
    }
}
