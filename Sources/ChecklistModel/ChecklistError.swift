/// An error that can cross the wire: a numeric code from Protocol/SPEC.md,
/// a human message and, where it applies, the offending field or the current
/// revision (for CONFLICT).
public struct ChecklistError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A wire error code. A struct with static constants rather than an enum,
    /// so that codes added by later protocol versions never break users.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }

        public static let malformedFrame = Code(rawValue: 1)
        public static let frameTooLarge = Code(rawValue: 2)
        public static let unknownMessage = Code(rawValue: 3)
        public static let badField = Code(rawValue: 4)
        public static let notFound = Code(rawValue: 5)
        public static let conflict = Code(rawValue: 6)
        public static let limitExceeded = Code(rawValue: 7)
        public static let notAuthenticated = Code(rawValue: 8)
        public static let unsupportedVersion = Code(rawValue: 9)
        public static let internalError = Code(rawValue: 10)
        public static let helloRequired = Code(rawValue: 11)
        public static let badState = Code(rawValue: 12)
        public static let resyncRequired = Code(rawValue: 13)
        public static let shuttingDown = Code(rawValue: 14)
        public static let overloaded = Code(rawValue: 15)
        /// An item's client key is already another item's in the list.
        public static let duplicateKey = Code(rawValue: 16)
        /// The server's storage cannot take changes now (its database is
        /// unreachable): nothing was applied; try again later.
        public static let unavailable = Code(rawValue: 17)
        /// The namespace's request rate is over the server's limit:
        /// nothing was done; try again after `retryAfterMilliseconds`.
        public static let rateLimited = Code(rawValue: 18)
        /// The change would pass a quota of the namespace (`field` names
        /// it: `lists`, `items`): nothing of it was applied.
        public static let quotaExceeded = Code(rawValue: 19)

        /// The name used in Protocol/SPEC.md, logs and CLI messages.
        public var name: String {
            switch self {
            case .malformedFrame: return "MALFORMED_FRAME"
            case .frameTooLarge: return "FRAME_TOO_LARGE"
            case .unknownMessage: return "UNKNOWN_MESSAGE"
            case .badField: return "BAD_FIELD"
            case .notFound: return "NOT_FOUND"
            case .conflict: return "CONFLICT"
            case .limitExceeded: return "LIMIT_EXCEEDED"
            case .notAuthenticated: return "NOT_AUTHENTICATED"
            case .unsupportedVersion: return "UNSUPPORTED_VERSION"
            case .internalError: return "INTERNAL_ERROR"
            case .helloRequired: return "HELLO_REQUIRED"
            case .badState: return "BAD_STATE"
            case .resyncRequired: return "RESYNC_REQUIRED"
            case .shuttingDown: return "SHUTTING_DOWN"
            case .overloaded: return "OVERLOADED"
            case .duplicateKey: return "DUPLICATE_KEY"
            case .unavailable: return "UNAVAILABLE"
            case .rateLimited: return "RATE_LIMITED"
            case .quotaExceeded: return "QUOTA_EXCEEDED"
            default: return "ERROR_\(rawValue)"
            }
        }

        public var description: String { name }
    }

    public var code: Code
    public var message: String
    /// The request field that was wrong (BAD_FIELD, LIMIT_EXCEEDED), if any.
    public var field: String?
    /// The list's current revision (CONFLICT), if any.
    public var revision: Revision?
    /// How long to wait before trying again (RATE_LIMITED), if said.
    public var retryAfterMilliseconds: UInt64?

    public init(_ code: Code, _ message: String, field: String? = nil, revision: Revision? = nil,
                retryAfterMilliseconds: UInt64? = nil) {
        self.code = code
        self.message = message
        self.field = field
        self.revision = revision
        self.retryAfterMilliseconds = retryAfterMilliseconds
    }

    public var description: String {
        var s = "\(code.name): \(message)"
        if let field { s += " (field \(field))" }
        if let revision { s += " (revision \(revision))" }
        if let retryAfterMilliseconds { s += " (retry after \(retryAfterMilliseconds) ms)" }
        return s
    }

    public static func badField(_ field: String, _ message: String) -> ChecklistError {
        ChecklistError(.badField, message, field: field)
    }

    public static func notFound(_ message: String) -> ChecklistError {
        ChecklistError(.notFound, message)
    }
}
