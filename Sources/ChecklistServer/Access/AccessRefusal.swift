import ChecklistJWT

/// Why a credential opens no namespace: a short reason for logs and
/// metrics (`reason=expired`) and a message for the client. Neither holds
/// the token.
struct AccessRefusal: Error, Equatable {
    /// The reasons of access control, in the order metrics list them:
    /// the signed-token reasons (`JWTRefusal.Reason`), then the others.
    struct Reason: Hashable, CustomStringConvertible {
        let description: String

        /// HELLO carried no token (and no certificate stands in).
        static let noToken = Reason(description: "no_token")
        /// A token neither the tokens file knows nor shaped like a signed token.
        static let unknownToken = Reason(description: "unknown_token")
        /// A client certificate whose subject opens no namespace.
        static let unknownCertificate = Reason(description: "unknown_certificate")
        /// A reload of the tokens or keys took the connection's access away.
        static let revoked = Reason(description: "revoked")

        init(description: String) { self.description = description }
        init(_ reason: JWTRefusal.Reason) { description = reason.description }

        static let all: [Reason] = JWTRefusal.Reason.all.map(Reason.init) + [noToken, unknownToken, unknownCertificate, revoked]
    }

    var reason: Reason
    var message: String

    init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    init(_ refusal: JWTRefusal) {
        self.init(Reason(refusal.reason), refusal.message)
    }
}
