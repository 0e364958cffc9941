import ChecklistJWT
import ChecklistModel
import ChecklistSocket
import Foundation
import Synchronization

/// Token-based access control (Protocol/SPEC.md section 2, "Access
/// control"): the token a client presents in HELLO chooses the namespace
/// of every request on its connection. A server without an `AccessControl`
/// serves everyone in `Namespace.default`.
///
/// Tokens are static (a `TokenTable`, `--tokens`) or signed (JWT checked by
/// a `TokenVerifier`, `--auth-keys`), or both: a token the table knows wins;
/// else one shaped like a JWT is verified; a client certificate counts only
/// for a HELLO without a token (`authenticate`).
///
/// Shared by every connection on every loop. Locking rule: `table` is
/// only read or replaced under its own lock, and lookups copy the table out
/// (copy-on-write: no token bytes are copied) so comparisons run unlocked.
/// `generation` grows with every replacement, so a session can tell with
/// one atomic load whether the token it authenticated with must be checked
/// again.
public final class AccessControl: Sendable {
    /// Failed HELLOs (missing or unknown token) a connection may make; the
    /// answer to the last one is followed by closing the connection.
    public static let maxFailedAttempts = 3

    /// The tokens file, if the table came from one (`reload()` reads it).
    public let path: String?
    private let table: Mutex<TokenTable>
    private let generationCounter = Atomic<UInt64>(0)
    /// Signed tokens (`--auth-keys`), if accepted.
    public let verifier: TokenVerifier?
    /// Refused authentications by reason, and where they are logged.
    let refusals = AccessRefusals()

    public init(table: TokenTable, path: String? = nil, verifier: TokenVerifier? = nil) {
        self.table = Mutex(table)
        self.path = path
        self.verifier = verifier
    }

    /// Reads the tokens file at `path`.
    public convenience init(path: String) throws(TokenFileError) {
        self.init(table: try Self.read(path), path: path)
    }

    /// The current tokens.
    public var tokens: TokenTable { table.withLock { $0 } }

    /// Replaces every token. Connections that authenticated with a token
    /// that no longer opens the same namespace are refused at their next
    /// request (`NOT_AUTHENTICATED`, then closed).
    public func replace(_ tokens: TokenTable) {
        table.withLock { $0 = tokens }
        generationCounter.add(1, ordering: .releasing)
    }

    /// Reads `path` again and replaces the tokens with its content (SIGHUP).
    /// On any error the tokens in use stay as they are.
    @discardableResult
    public func reload() throws(TokenFileError) -> TokenTable {
        guard let path else { throw TokenFileError(line: 0, "the tokens did not come from a file") }
        let fresh = try Self.read(path)
        replace(fresh)
        return fresh
    }

    /// Reads the signing keys' file again (SIGHUP): connections whose token
    /// no key verifies any more are refused at their next request. On any
    /// error the keys in use stay.
    @discardableResult
    public func reloadKeys() throws(KeySetError) -> KeySet {
        guard let verifier else { throw KeySetError("no signing keys are in use") }
        let fresh = try verifier.reload()
        generationCounter.add(1, ordering: .releasing)
        return fresh
    }

    /// What a connection authenticated with: the token of its HELLO, or
    /// (mutual TLS, a HELLO without a token) its client certificate's subject.
    enum Credential: Hashable {
        case token(String)
        case certificate(subject: String)
    }

    /// The namespace `token` opens now, or nil.
    func namespace(for token: String) -> Namespace? {
        tokens.namespace(for: token)
    }

    /// What a credential opens: a namespace, until `validUntil` (seconds
    /// since 1970) for a signed token, for as long as the tokens stay for
    /// the others.
    struct Grant: Equatable {
        var namespace: Namespace
        var validUntil: Double?
    }

    /// What `credential` opens at `now` (seconds since 1970), or why not.
    /// Counts and logs nothing (`refusals` does).
    func authenticate(_ credential: Credential, now: Double) -> Result<Grant, AccessRefusal> {
        switch credential {
        case .certificate(let subject):
            guard let namespace = tokens.namespace(forCertificateSubject: subject) else {
                return .failure(AccessRefusal(.unknownCertificate, "no token, and the client certificate \(subject) opens no namespace"))
            }
            return .success(Grant(namespace: namespace))
        case .token(let token):
            if let namespace = tokens.namespace(for: token) { return .success(Grant(namespace: namespace)) }
            guard let verifier, TokenVerifier.looksLikeJWT(token) else {
                return .failure(AccessRefusal(.unknownToken, "unknown token"))
            }
            do {
                let grant = try verifier.verify(token, now: now)
                return .success(Grant(namespace: Namespace(grant.namespace), validUntil: grant.validUntil))
            } catch {
                return .failure(AccessRefusal(error))
            }
        }
    }

    /// The wall clock, in seconds since 1970: signed tokens' times are on it.
    static func now() -> Double { Date().timeIntervalSince1970 }

    /// Grows whenever the tokens or the signing keys are replaced.
    var generation: UInt64 { generationCounter.load(ordering: .acquiring) }

    private static func read(_ path: String) throws(TokenFileError) -> TokenTable {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw TokenFileError(line: 0, "cannot read \(path): \(error.localizedDescription)")
        }
        return try TokenTable.parse(text)
    }

    /// Whether `host` (as given to `--host`) is a loopback address:
    /// 127.0.0.0/8, `::1` or `localhost`. Anything else, including the
    /// wildcard addresses, is reachable from other machines.
    public static func isLoopback(host: String) -> Bool {
        guard let address = try? SocketAddress(host: host, port: 0) else { return false }
        let numeric = address.host.lowercased()  // canonical text: inet_ntop
        switch address.family {
        case .ipv4: return numeric.hasPrefix("127.")
        case .ipv6: return numeric == "::1" || numeric.hasPrefix("::ffff:127.")
        }
    }
}
