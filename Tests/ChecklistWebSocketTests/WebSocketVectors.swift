import Foundation

/// Protocol/vectors/websocket/, copied into the test bundle.
enum WebSocketVectors {
    struct File<Case: Decodable>: Decodable {
        var description: String
        var cases: [Case]
    }

    struct Handshake: Decodable {
        var name: String
        var request: String
        var allowedOrigins: [String]
        var status: Int
        var response: String?
    }

    struct ClientFrames: Decodable {
        struct Control: Decodable, Equatable {
            var op: String
            var payload: String?
            var code: Int?
            var reason: String?
        }
        struct Failure: Decodable, Equatable {
            var reason: String
            var closeCode: Int
        }
        var name: String
        var reads: [String]
        var stream: String
        var controls: [Control]
        var maxMessageBytes: Int
        var failure: Failure?
    }

    struct ServerFrame: Decodable {
        var name: String
        var opcode: UInt8
        var payload: String
        var frame: String
    }

    static func load<Case: Decodable>(_ file: String, as: Case.Type) throws -> [Case] {
        guard let dir = Bundle.module.url(forResource: "websocket", withExtension: nil) else {
            throw CocoaError(.fileNoSuchFile)
        }
        let data = try Data(contentsOf: dir.appendingPathComponent(file))
        return try JSONDecoder().decode(File<Case>.self, from: data).cases
    }
}

extension Array where Element == UInt8 {
    init(hex: String) {
        var bytes: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            let j = hex.index(i, offsetBy: 2)
            bytes.append(UInt8(hex[i..<j], radix: 16)!)
            i = j
        }
        self = bytes
    }

    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
