import Foundation

/// The keys that may sign tokens, by `kid`: a JWK Set (RFC 7517 section 5)
/// as read from `checklistd --auth-keys FILE`:
///
///     {"keys": [{"kty": "EC", "crv": "P-256", "kid": "2026-01", "x": "...", "y": "..."},
///               {"kty": "oct", "kid": "backend", "k": "..."}]}
///
/// Every key needs a `kid`, unique in the set. A key that cannot be used
/// makes the whole set refused (`KeySetError` names the key): a reload
/// then keeps the keys in use.
public struct KeySet: Sendable {
    private(set) var keys: [String: VerificationKey] = [:]

    public init() {}

    /// Number of keys.
    public var count: Int { keys.count }

    /// The key named `kid`, if any.
    public func key(kid: String) -> VerificationKey? { keys[kid] }

    /// How many keys of each algorithm: "2 RS256, 1 EdDSA".
    public var summary: String {
        SigningAlgorithm.allCases.compactMap { algorithm in
            let n = keys.values.filter { $0.algorithm == algorithm }.count
            return n > 0 ? "\(n) \(algorithm.rawValue)" : nil
        }.joined(separator: ", ")
    }

    /// Parses the text of a JWK Set.
    public static func parse(_ json: [UInt8]) throws(KeySetError) -> KeySet {
        struct Document: Decodable { var keys: [JSONWebKey] }
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: Data(json))
        } catch {
            throw KeySetError("not a JWK Set (a JSON object whose \"keys\" array holds keys with string members)")
        }
        var set = KeySet()
        for jwk in document.keys {
            guard let kid = jwk.kid, !kid.isEmpty else { throw KeySetError("a key (kty \(jwk.kty)) has no kid") }
            guard set.keys[kid] == nil else { throw KeySetError("the kid '\(kid)' appears twice") }
            set.keys[kid] = try jwk.verificationKey()
        }
        return set
    }

    /// Reads and parses the file at `path`.
    public static func read(_ path: String) throws(KeySetError) -> KeySet {
        guard let data = FileManager.default.contents(atPath: path) else { throw KeySetError("cannot read \(path)") }
        return try parse(Array(data))
    }
}

/// A JWK Set that cannot be used. The message never holds key material.
public struct KeySetError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
