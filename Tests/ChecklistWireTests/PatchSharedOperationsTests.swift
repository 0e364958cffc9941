import ChecklistModel
import ChecklistWire
import Testing

/// `Patch.decode(from:appendingOperationsTo:)`, which a server stages a
/// read's PATCHes with (their operations in one array), checked against
/// every PATCH vector: the same message and operations as `decode(from:)`,
/// appended after what the array held, and for a malformed PATCH the same
/// error with the array left as it was.
@Suite("PATCH decoded into a shared array")
struct PatchSharedOperationsTests {
    /// Operations a batch staged before the vector's PATCH.
    static let earlier: [PatchOperation] = [.toggle(.id(ItemID(7))), .delete(.temp(3))]

    static var patchVectors: [String] {
        GoldenVectors.names.filter { name in
            (try? GoldenVectors.load(name)).map { $0.direction == .request && $0.frame?.type == MessageType.patch.rawValue } ?? false
        }
    }

    @Test func everyKindOfPatchVectorIsChecked() {
        let names = Self.patchVectors
        #expect(names.contains { !$0.hasPrefix("malformed-") })
        #expect(names.contains { $0.hasPrefix("malformed-") })
    }

    @Test(arguments: patchVectors)
    func decodesAsItsOwnArrayWould(_ name: String) throws {
        let v = try GoldenVectors.load(name)
        let alone = Result { try Self.withBody(v) { r throws(ChecklistError) in try Patch.decode(from: &r) } }
        var shared = Self.earlier
        let appended = Result {
            try Self.withBody(v) { r throws(ChecklistError) in try Patch.decode(from: &r, appendingOperationsTo: &shared) }
        }
        switch (alone, appended) {
        case let (.success(patch), .success(decoded)):
            #expect(!v.isMalformed)
            #expect(decoded.ops == Self.earlier.count..<shared.count)
            #expect(Array(shared[decoded.ops]) == patch.ops)
            let whole = Patch(list: decoded.list, baseRevision: decoded.baseRevision,
                              idempotencyKey: decoded.idempotencyKey, ops: Array(shared[decoded.ops]))
            #expect(whole == patch)
        case let (.failure(error), .failure(sharedError)):
            let refusal = try #require(error as? ChecklistError)
            #expect(sharedError as? ChecklistError == refusal)
            #expect(v.error.map { $0.code == refusal.code.rawValue } ?? false, "\(name): \(refusal)")
        default:
            Issue.record("\(name): \(alone) alone, \(appended) into a shared array")
        }
        #expect(Array(shared.prefix(Self.earlier.count)) == Self.earlier, "what the array held stays")
        if case .failure = appended { #expect(shared == Self.earlier, "a refused PATCH leaves nothing behind") }
    }

    /// Runs `decode` on the message bytes of the vector's one frame.
    static func withBody<T>(_ v: GoldenVector, _ decode: (inout WireReader) throws(ChecklistError) -> T) throws -> T {
        let bytes = v.bytes
        return try bytes.withUnsafeBytes { raw in
            guard case .frame(let header, let body, _) = FrameParser.next(in: raw, maxFrameBytes: v.limit) else {
                throw ChecklistError(.malformedFrame, "the vector's frame does not parse")
            }
            return try FrameBody.withMessageBytes(header: header, body: UnsafeRawBufferPointer(rebasing: raw[body]),
                                                  maxFrameBytes: v.limit, decode)
        }
    }
}
