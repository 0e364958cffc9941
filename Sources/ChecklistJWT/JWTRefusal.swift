/// Why a signed token (JWT) was refused. Each reason has a short name for
/// logs and metrics (`reason=expired`); the message says more and never
/// holds the token.
public struct JWTRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// The reasons, with the names logs and metrics use.
    public struct Reason: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Code: String, CaseIterable {
            case malformed, tooLarge = "too_large", algNone = "alg_none", unknownKey = "unknown_kid"
            case algMismatch = "alg_mismatch", badSignature = "bad_signature", expired
            case notYetValid = "not_yet_valid", wrongIssuer = "wrong_issuer", wrongAudience = "wrong_audience"
            case missingNamespace = "missing_namespace"
        }
        fileprivate let code: Code

        /// Not three base64url parts, or a header or payload that is not a JSON object of the expected types.
        public static let malformed = Reason(code: .malformed)
        /// Longer than `TokenVerifier.maxTokenBytes`.
        public static let tooLarge = Reason(code: .tooLarge)
        /// `alg` is `none`: an unsigned token.
        public static let algNone = Reason(code: .algNone)
        /// No key with the header's `kid` (or no `kid`).
        public static let unknownKey = Reason(code: .unknownKey)
        /// The header's `alg` is not the one of the key its `kid` names.
        public static let algMismatch = Reason(code: .algMismatch)
        /// The signature does not verify.
        public static let badSignature = Reason(code: .badSignature)
        /// `exp` passed (beyond the leeway), or there is no `exp`.
        public static let expired = Reason(code: .expired)
        /// `nbf` or `iat` lies in the future (beyond the leeway).
        public static let notYetValid = Reason(code: .notYetValid)
        /// `iss` is not the issuer the server expects.
        public static let wrongIssuer = Reason(code: .wrongIssuer)
        /// `aud` does not name the audience the server expects.
        public static let wrongAudience = Reason(code: .wrongAudience)
        /// The namespace claim is missing, empty or not a string.
        public static let missingNamespace = Reason(code: .missingNamespace)

        /// Every reason, in a fixed order (metrics list them all).
        public static let all: [Reason] = Code.allCases.map { Reason(code: $0) }

        /// Position in `all`.
        public var index: Int { Code.allCases.firstIndex(of: code)! }

        /// The name in logs and metrics: `expired`, `bad_signature`, ...
        public var description: String { code.rawValue }
    }

    public var reason: Reason
    public var message: String

    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { "\(reason): \(message)" }
}
