import ChecklistModel
import ChecklistWire
import Foundation
import Testing

/// The points of Protocol/SPEC.md sections 1-3 that a second implementation
/// found unclear, checked against the real server: which error a frame
/// before the handshake gets, what "before its HELLO_OK" means for a frame
/// written right behind HELLO, and which zero counts are refused while
/// decoding and which when carried out.
extension SpecClarificationTests {
    /// The golden vector `name`, read from Protocol/vectors beside this
    /// package (the integration tests run from the source tree).
    static func vector(_ name: String) throws -> (bytes: [UInt8], code: UInt64, field: String?) {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Protocol/vectors/\(name).json")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
        guard let hex = json?["hex"] as? String, let error = json?["error"] as? [String: Any],
              let code = error["code"] as? Int else { throw TestFailure("\(name): not a malformed vector") }
        let bytes = stride(from: 0, to: hex.count, by: 2).map { offset -> UInt8 in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        }
        return (bytes, UInt64(code), error["field"] as? String)
    }

    /// Sections 1-2: a COMPRESSED frame before HELLO_OK is `BAD_FIELD
    /// flags` whatever its body (flags are checked before inflating), so
    /// the four compressed malformed vectors get that before the handshake
    /// and their own error after it; the connection stays open.
    @Test(arguments: ["malformed-not-zlib", "malformed-zlib-truncated", "malformed-zlib-trailing-bytes",
                      "malformed-zlib-bomb"])
    func aCompressedMalformedVectorBeforeTheHandshakeIsBadFlags(_ name: String) throws {
        let server = try TestServer.start(["--max-frame", "65536"])  // the limit of malformed-zlib-bomb
        defer { server.stop() }
        let vector = try Self.vector(name)
        let connection = try RawConnection(port: server.port)
        try connection.send(vector.bytes)
        let before = try connection.receiveError().error
        #expect(before.code == .badField && before.field == "flags")
        _ = try connection.handshake()
        try connection.send(vector.bytes)
        let after = try connection.receiveError().error
        #expect(UInt64(after.code.rawValue) == vector.code && after.field == vector.field)
    }

    /// Section 1: "before its HELLO_OK" is in the connection's order of
    /// frames, not in time. A compressed frame written right behind a HELLO
    /// the server accepts (before HELLO_OK could arrive) comes after that
    /// HELLO_OK and is served; one behind a refused HELLO is before it.
    @Test func aCompressedFrameRightBehindHelloFollowsItsAnswer() throws {
        let server = try TestServer.start()
        defer { server.stop() }
        var packed = FrameEncoder(compress: true)
        var w = WireWriter()
        packed.append(Ping(data: [UInt8](repeating: 7, count: Ping.maxDataBytes)), requestID: 2, to: &w)
        let compressedPing = w.bytes
        #expect(compressedPing[5] == FrameFlags.compressed.rawValue)
        func hello(_ hello: Hello) -> [UInt8] {
            var encoder = FrameEncoder(compress: false)
            var out = WireWriter()
            encoder.append(hello, requestID: 1, to: &out)
            return out.bytes
        }

        let accepted = try RawConnection(port: server.port)
        try accepted.send(hello(Hello(clientName: "pipelining")) + compressedPing)
        guard case .helloOK = try accepted.receive().message else { throw TestFailure("expected HELLO_OK") }
        let (header, pong) = try accepted.receive()
        #expect(header.requestID == 2 && pong == .pong(Pong(data: [UInt8](repeating: 7, count: Ping.maxDataBytes))))

        let refused = try RawConnection(port: server.port)
        try refused.send(hello(Hello(minVersion: 2, maxVersion: 5, clientName: "too new")) + compressedPing)
        #expect(try refused.receiveError().error.code == .unsupportedVersion)
        let (id, error) = try refused.receiveError()
        #expect(id == 2 && error.code == .badField && error.field == "flags")
    }

    /// Sections 2 and 4: a 0 where at least 1 is asked (GET_PAGE limit,
    /// CHANGES_SINCE limit, a PATCH's operations) decodes and is refused
    /// when the request is carried out: `HELLO_REQUIRED` before the
    /// handshake, `BAD_FIELD` after it.
    @Test func zeroLimitsAndEmptyPatchesAreRefusedWhenCarriedOut() throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        func requests(_ list: ListID) -> [(Request, String)] {
            [(.getPage(GetPage(list: list, limit: 0)), "limit"),
             (.changesSince(ChangesSince(list: list, revision: 0, limit: 0)), "limit"),
             (.patch(Patch(list: list, ops: [])), "ops")]
        }
        for (index, (request, _)) in requests(ListID(1)).enumerated() {
            try connection.send(request, id: UInt32(10 + index))
            let (id, error) = try connection.receiveError()
            #expect(id == UInt32(10 + index) && error.code == .helloRequired, "\(request.type) before HELLO")
        }
        _ = try connection.handshake()
        try connection.send(.createList(CreateList(name: "Zero", icon: "")), id: 2)
        guard case .listCreated(let created) = try connection.receive().message else { throw TestFailure("expected LIST") }
        for (index, (request, field)) in requests(created.summary.id).enumerated() {
            try connection.send(request, id: UInt32(20 + index))
            let (id, error) = try connection.receiveError()
            #expect(id == UInt32(20 + index) && error.code == .badField && error.field == field, "\(request.type)")
        }
    }
}
