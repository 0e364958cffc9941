import ChecklistWire
import Foundation

/// The claims of a token's payload (RFC 7519 section 4) that the verifier
/// checks, plus the one that names the namespace. Times are NumericDate:
/// seconds since 1970, possibly fractional. A registered claim of the
/// wrong JSON type makes the payload `malformed`.
struct Claims {
    var exp: Double?
    var nbf: Double?
    var iat: Double?
    var iss: String?
    /// `aud`: one string or an array of strings.
    var aud: [String]?
    /// The value of the namespace claim, when it is a string.
    var namespace: String?

    /// The payload of the token's second part (base64url JSON), or `malformed`.
    static func decode(base64url part: ArraySlice<UInt8>, namespaceClaim: String) throws(JWTRefusal) -> Claims {
        guard let json = Base64.decodeURL(part) else { throw JWTRefusal(.malformed, "the payload is not base64url") }
        let decoder = JSONDecoder()
        decoder.userInfo[Self.namespaceClaimKey] = namespaceClaim
        do {
            return try decoder.decode(Payload.self, from: Data(json)).claims
        } catch {
            throw JWTRefusal(.malformed, "the payload is not a JSON object with claims of the registered types")
        }
    }

    private static let namespaceClaimKey = CodingUserInfoKey(rawValue: "namespaceClaim")!

    /// Decodes the object member by member, so the namespace claim may have any name.
    private struct Payload: Decodable {
        var claims = Claims()

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: Decoder) throws {
            let object = try decoder.container(keyedBy: Key.self)
            let namespaceClaim = decoder.userInfo[Claims.namespaceClaimKey] as? String ?? "sub"
            for key in object.allKeys {
                switch key.stringValue {
                case "exp": claims.exp = try object.decode(Double.self, forKey: key)
                case "nbf": claims.nbf = try object.decode(Double.self, forKey: key)
                case "iat": claims.iat = try object.decode(Double.self, forKey: key)
                case "iss": claims.iss = try object.decode(String.self, forKey: key)
                case "aud":
                    if let one = try? object.decode(String.self, forKey: key) {
                        claims.aud = [one]
                    } else {
                        claims.aud = try object.decode([String].self, forKey: key)
                    }
                default: break
                }
                // Checked apart from the switch: the namespace claim may be a registered one (`sub`, `iss`).
                if key.stringValue == namespaceClaim {
                    claims.namespace = try? object.decode(String.self, forKey: key)
                }
            }
        }
    }
}
