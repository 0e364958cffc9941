/// The JWS algorithms (RFC 7518 section 3, RFC 8037 section 3.1) this
/// verifier accepts, by their `alg` names.
public enum SigningAlgorithm: String, Sendable, Hashable, CaseIterable {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case rs256 = "RS256"
    /// ECDSA on P-256 with SHA-256; the signature is `r || s`, 32 bytes each.
    case es256 = "ES256"
    /// Ed25519 (`alg` `EdDSA`, the key's `crv` says which curve).
    case edDSA = "EdDSA"
    /// HMAC with SHA-256 and a shared secret (`oct` key).
    case hs256 = "HS256"
}
