import ChecklistWire
import Foundation

/// The header of a signed token (RFC 7515 section 4): which algorithm
/// signed it and with which key. Other members are ignored; `crit` is
/// refused, since this verifier understands no extension.
struct JOSEHeader: Decodable {
    var alg: String
    var kid: String?
    var crit: [String]?

    /// The header of the token's first part (base64url JSON), or `malformed`.
    static func decode(base64url part: ArraySlice<UInt8>) throws(JWTRefusal) -> JOSEHeader {
        guard let json = Base64.decodeURL(part) else { throw JWTRefusal(.malformed, "the header is not base64url") }
        let header: JOSEHeader
        do {
            header = try JSONDecoder().decode(JOSEHeader.self, from: Data(json))
        } catch {
            throw JWTRefusal(.malformed, "the header is not a JSON object with a string alg")
        }
        guard header.crit == nil else { throw JWTRefusal(.malformed, "the header has crit extensions this server does not know") }
        return header
    }
}
