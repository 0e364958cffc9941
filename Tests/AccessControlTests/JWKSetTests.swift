import ChecklistJWT
import ChecklistWire
import Testing

/// The parts of ChecklistJWT that need no signer: strict base64url, and
/// the JWK Sets a server refuses to load (the whole file, naming the key).
@Suite struct JWKSetTests {
    @Test(arguments: [("", [UInt8]()), ("AQAB", [1, 0, 1]), ("_-8", [0xFF, 0xEF]), ("YQ", [0x61])])
    func base64urlDecodes(text: String, bytes: [UInt8]) {
        #expect(Base64.decodeURL(text) == bytes)
    }

    /// Padding, the standard alphabet, a lone sixth of a byte, and set trailing bits are refused.
    @Test(arguments: ["YQ==", "a+b/", "A", "YR", "ab!c"])
    func base64urlRefuses(text: String) {
        #expect(Base64.decodeURL(text) == nil)
    }

    static let secret = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldC0"  // 35 bytes

    @Test func aGoodSetLoads() throws {
        let set = try KeySet.parse(Array("""
            {"keys": [{"kty": "oct", "kid": "a", "k": "\(Self.secret)"},
                      {"kty": "OKP", "crv": "Ed25519", "kid": "b", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}
            """.utf8))
        #expect(set.count == 2 && set.key(kid: "a")?.algorithm == .hs256 && set.key(kid: "b")?.algorithm == .edDSA)
    }

    @Test(arguments: [
        (#"{"keys": [{"kty": "oct", "k": "\#(secret)"}]}"#, "no kid"),
        (#"{"keys": [{"kty": "oct", "kid": "a", "k": "\#(secret)"}, {"kty": "oct", "kid": "a", "k": "\#(secret)"}]}"#, "twice"),
        (#"{"keys": [{"kty": "oct", "kid": "a", "k": "c2hvcnQ"}]}"#, "at least 32 bytes"),
        (#"{"keys": [{"kty": "oct", "kid": "a", "k": "\#(secret)", "alg": "RS256"}]}"#, "does not fit"),
        (#"{"keys": [{"kty": "RSA", "kid": "r", "n": "AQAB", "e": "AQAB"}]}"#, "under 2048"),
        (#"{"keys": [{"kty": "EC", "crv": "P-256", "kid": "e", "x": "\#(String(repeating: "A", count: 43))", "y": "\#(String(repeating: "A", count: 43))"}]}"#, "not a point"),
        (#"{"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "d", "x": "AQAB", "d": "AQAB"}]}"#, "private key"),
        (#"{"keys": [{"kty": "EC", "crv": "P-384", "kid": "e", "x": "AQAB", "y": "AQAB"}]}"#, "not P-256"),
        (#"{"kees": []}"#, "not a JWK Set"),
    ])
    func badSetsAreRefusedNamingWhy(json: String, reason: String) {
        let error = #expect(throws: KeySetError.self) { try KeySet.parse(Array(json.utf8)) }
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
    }

    @Test func onlyTokensWithTwoDotsAreVerified() {
        #expect(TokenVerifier.looksLikeJWT("a.b.c") && !TokenVerifier.looksLikeJWT("static-token") && !TokenVerifier.looksLikeJWT("a.b"))
    }
}
