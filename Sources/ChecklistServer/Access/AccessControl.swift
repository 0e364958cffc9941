import ChecklistModel
import ChecklistSocket
import Foundation
import Synchronization

/// Token-based access control (Protocol/SPEC.md section 2, "Access
/// control"): the token a client presents in HELLO chooses the namespace
/// of every request on its connection. A server without an `AccessControl`
/// serves everyone in `Namespace.default`.
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

    public init(table: TokenTable, path: String? = nil) {
        self.table = Mutex(table)
        self.path = path
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

    /// The namespace `credential` opens now, or nil.
    func namespace(for credential: Credential) -> Namespace? {
        switch credential {
        case .token(let token): return tokens.namespace(for: token)
        case .certificate(let subject): return tokens.namespace(forCertificateSubject: subject)
        }
    }

    /// Grows whenever the tokens are replaced.
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
