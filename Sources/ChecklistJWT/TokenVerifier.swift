import ChecklistWire
import Synchronization

/// Verifies signed tokens (JWT, RFC 7519, in JWS compact form, RFC 7515)
/// against a `KeySet` and the server's expectations, and says which
/// namespace a token opens until when.
///
/// Shared by every connection. Locking rule: `keySet` is only read or
/// replaced under its lock; a verification copies the set out (a
/// dictionary of class references: no key is copied) and verifies unlocked.
public final class TokenVerifier: Sendable {
    /// What a token must carry, besides a good signature.
    public struct Expectations: Sendable, Hashable {
        /// `iss` must equal this, when given.
        public var issuer: String?
        /// `aud` must name this, when given.
        public var audience: String?
        /// The claim whose string value is the namespace.
        public var namespaceClaim: String = "sub"
        /// Seconds of clock difference allowed for `exp`, `nbf` and `iat`.
        public var leewaySeconds: Double = 60
        public init() {}
    }

    /// What a good token grants.
    public struct Grant: Sendable, Hashable {
        /// The namespace claim's value.
        public var namespace: String
        /// Until when (seconds since 1970) the grant holds: `exp` plus the leeway.
        public var validUntil: Double
    }

    /// Longest token verified, in UTF-8 bytes; longer ones are `tooLarge`.
    public static let maxTokenBytes = 8192

    public let expectations: Expectations
    /// The JWK Set file, if the keys came from one (`reload()` reads it).
    public let path: String?
    private let keySet: Mutex<KeySet>

    public init(keys: KeySet, expectations: Expectations, path: String? = nil) {
        self.keySet = Mutex(keys)
        self.expectations = expectations
        self.path = path
    }

    /// Reads the JWK Set at `path`.
    public convenience init(path: String, expectations: Expectations) throws(KeySetError) {
        self.init(keys: try KeySet.read(path), expectations: expectations, path: path)
    }

    /// The keys in use.
    public var keys: KeySet { keySet.withLock { $0 } }

    /// Replaces the keys (rotation: the new set may hold old and new keys).
    public func replace(_ keys: KeySet) {
        keySet.withLock { $0 = keys }
    }

    /// Reads `path` again and replaces the keys with it; on any error the
    /// keys in use stay.
    @discardableResult
    public func reload() throws(KeySetError) -> KeySet {
        guard let path else { throw KeySetError("the keys did not come from a file") }
        let fresh = try KeySet.read(path)
        replace(fresh)
        return fresh
    }

    /// Whether `token` has the shape of a JWS compact token (two dots), so
    /// it is worth verifying rather than looking up as a static token.
    public static func looksLikeJWT(_ token: String) -> Bool {
        token.utf8.lazy.filter { $0 == UInt8(ascii: ".") }.count == 2
    }

    /// The grant of `token` at `now` (seconds since 1970), or why not.
    public func verify(_ token: String, now: Double) throws(JWTRefusal) -> Grant {
        let bytes = Array(token.utf8)
        guard bytes.count <= Self.maxTokenBytes else {
            throw JWTRefusal(.tooLarge, "the token is longer than \(Self.maxTokenBytes) bytes")
        }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw JWTRefusal(.malformed, "not three dot-separated parts") }
        let header = try JOSEHeader.decode(base64url: parts[0])
        guard header.alg.lowercased() != "none" else { throw JWTRefusal(.algNone, "alg none: the token is not signed") }
        guard let kid = header.kid, let key = keys.key(kid: kid) else {
            throw JWTRefusal(.unknownKey, header.kid.map { "no key with kid '\($0)'" } ?? "the header has no kid")
        }
        guard header.alg == key.algorithm.rawValue else {
            throw JWTRefusal(.algMismatch, "alg \(header.alg), but key '\(kid)' is \(key.algorithm.rawValue)")
        }
        guard let signature = Base64.decodeURL(parts[2]) else { throw JWTRefusal(.malformed, "the signature is not base64url") }
        guard Base64.decodeURL(parts[1]) != nil else { throw JWTRefusal(.malformed, "the payload is not base64url") }
        // The signing input is the first two parts with the dot between them.
        let signed = bytes[..<parts[1].endIndex]
        guard key.verifies(signature, of: signed) else { throw JWTRefusal(.badSignature, "the signature does not verify with key '\(kid)'") }
        let claims = try Claims.decode(base64url: parts[1], namespaceClaim: expectations.namespaceClaim)
        return try grant(claims, now: now)
    }

    /// Checks the claims of a token whose signature verified.
    private func grant(_ claims: Claims, now: Double) throws(JWTRefusal) -> Grant {
        let leeway = expectations.leewaySeconds
        guard let exp = claims.exp else { throw JWTRefusal(.expired, "the token has no exp") }
        guard now < exp + leeway else { throw JWTRefusal(.expired, "the token expired at \(Int64(exp))") }
        if let nbf = claims.nbf, now + leeway < nbf { throw JWTRefusal(.notYetValid, "the token is not valid before \(Int64(nbf))") }
        if let iat = claims.iat, now + leeway < iat { throw JWTRefusal(.notYetValid, "the token was issued in the future (\(Int64(iat)))") }
        if let issuer = expectations.issuer, claims.iss != issuer {
            throw JWTRefusal(.wrongIssuer, claims.iss.map { "iss '\($0)' is not the expected issuer" } ?? "the token has no iss")
        }
        if let audience = expectations.audience, !(claims.aud ?? []).contains(audience) {
            throw JWTRefusal(.wrongAudience, "aud does not name this server's audience")
        }
        guard let namespace = claims.namespace, !namespace.isEmpty else {
            throw JWTRefusal(.missingNamespace, "no string claim '\(expectations.namespaceClaim)' names the namespace")
        }
        return Grant(namespace: namespace, validUntil: exp + leeway)
    }
}
