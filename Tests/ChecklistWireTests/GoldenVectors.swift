import ChecklistModel
import ChecklistWire
import Foundation

/// One file of Protocol/vectors (format: Protocol/vectors/README.md).
struct GoldenVector: Decodable, Sendable {
    enum Direction: String, Decodable, Sendable {
        case request, response
    }

    enum EncodeCheck: String, Decodable, Sendable {
        /// Encoding `fields` gives exactly `hex`.
        case exact
        /// `hex` is a non-canonical form decoders accept; encoding gives `canonicalHex`.
        case canonical
        /// A compressed frame: only decode(encode(fields)) == fields is checked.
        case roundtrip
    }

    struct Frame: Decodable, Hashable, Sendable {
        var type: UInt8
        var flags: UInt8
        var request: UInt32
    }

    struct ExpectedError: Decodable, Sendable {
        var code: UInt16
        var name: String
        var field: String?
        var closesConnection: Bool
    }

    var name: String
    var description: String
    var direction: Direction
    var hex: String
    var canonicalHex: String?
    var encodeCheck: EncodeCheck?
    var frame: Frame?
    var message: String?
    var fields: JSONValue?
    var error: ExpectedError?
    var maxFrameBytes: UInt32?
    var inflatedBodyBytes: Int?
    var measurement: JSONValue?

    var bytes: [UInt8] { [UInt8](hex: hex)! }
    var limit: UInt32 { maxFrameBytes ?? GoldenVectors.defaultMaxFrameBytes }
    var isMalformed: Bool { error != nil }
}

enum GoldenVectors {
    static let defaultMaxFrameBytes: UInt32 = 4 << 20

    /// The `vectors` directory the test target copies from Protocol/vectors.
    static var directory: URL? { Bundle.module.url(forResource: "vectors", withExtension: nil) }

    /// Names (file names without `.json`) of every vector, sorted.
    static let names: [String] = {
        guard let dir = directory,
              let files = try? FileManager.default.contentsOfDirectory(atPath: dir.path) else { return [] }
        return files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }()

    static func load(_ name: String) throws -> GoldenVector {
        guard let dir = directory else { throw VectorMappingError("no vectors resource") }
        let data = try Data(contentsOf: dir.appendingPathComponent(name + ".json"))
        return try JSONDecoder().decode(GoldenVector.self, from: data)
    }

    static func all() throws -> [GoldenVector] { try names.map(load) }

    static var validNames: [String] { names.filter { !$0.hasPrefix("malformed-") } }
    static var malformedNames: [String] { names.filter { $0.hasPrefix("malformed-") } }
}

/// A message decoded by the codec, from either direction.
enum DecodedMessage: Equatable {
    case request(Request)
    case server(ServerMessage)

    var json: (message: String, fields: JSONValue) {
        switch self {
        case .request(let r): return VectorJSON.json(r)
        case .server(let m): return VectorJSON.json(m)
        }
    }

    static func from(_ v: GoldenVector) throws -> DecodedMessage {
        guard let message = v.message, let fields = v.fields, let frame = v.frame else {
            throw VectorMappingError("\(v.name) has no message")
        }
        switch v.direction {
        case .request: return .request(try VectorJSON.request(message: message, fields: fields))
        case .response: return .server(try VectorJSON.serverMessage(message: message, type: frame.type, fields: fields))
        }
    }

    /// One frame holding this message.
    func encoded(requestID: UInt32, compress: Bool = false) -> [UInt8] {
        var w = WireWriter()
        var encoder = FrameEncoder(compress: compress)
        switch self {
        case .request(let r): r.encode(requestID: requestID, into: &w, encoder: &encoder)
        case .server(let m): m.encode(requestID: requestID, into: &w, encoder: &encoder)
        }
        return w.bytes
    }
}

/// What the codec makes of the first frame in some bytes.
enum ParseOutcome {
    case needMore
    case fatal(ChecklistError)
    case frame(FrameHeader, consumed: Int, Result<DecodedMessage, ChecklistError>)

    var consumed: Int? {
        if case .frame(_, let consumed, _) = self { return consumed }
        return nil
    }

    var isNeedMore: Bool {
        if case .needMore = self { return true }
        return false
    }
}

enum Codec {
    /// FrameParser.next, then Request.decode or ServerMessage.decode.
    static func parse(_ bytes: some Collection<UInt8>, direction: GoldenVector.Direction,
                      maxFrameBytes: UInt32 = GoldenVectors.defaultMaxFrameBytes) -> ParseOutcome {
        Array(bytes).withUnsafeBytes { raw -> ParseOutcome in
            switch FrameParser.next(in: raw, maxFrameBytes: maxFrameBytes) {
            case .needMore:
                return .needMore
            case .fatal(let error):
                return .fatal(error)
            case .frame(let header, let bodyRange, let consumed):
                let body = UnsafeRawBufferPointer(rebasing: raw[bodyRange])
                let result = Result { () throws(ChecklistError) -> DecodedMessage in
                    switch direction {
                    case .request:
                        return .request(try Request.decode(header: header, body: body, maxFrameBytes: maxFrameBytes))
                    case .response:
                        return .server(try ServerMessage.decode(header: header, body: body, maxFrameBytes: maxFrameBytes))
                    }
                }
                return .frame(header, consumed: consumed, result)
            }
        }
    }

    /// Decodes bytes that must hold exactly one well-formed frame.
    static func decodeOne(_ bytes: [UInt8], direction: GoldenVector.Direction,
                          maxFrameBytes: UInt32 = GoldenVectors.defaultMaxFrameBytes) throws -> (FrameHeader, DecodedMessage) {
        switch parse(bytes, direction: direction, maxFrameBytes: maxFrameBytes) {
        case .needMore: throw VectorMappingError("incomplete frame")
        case .fatal(let e): throw e
        case .frame(let header, let consumed, let result):
            guard consumed == bytes.count else { throw VectorMappingError("consumed \(consumed) of \(bytes.count) bytes") }
            return (header, try result.get())
        }
    }
}

/// Runs `body` on a reader over `bytes` (the reader must not escape).
func readBody<T>(_ bytes: [UInt8], _ body: (inout WireReader) throws -> T) throws -> T {
    try bytes.withUnsafeBytes { raw in
        var reader = WireReader(raw)
        return try body(&reader)
    }
}
