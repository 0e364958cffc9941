import ChecklistModel
import ChecklistTLS
import ChecklistFrames

/// One entry of the catalogue: an input sent to a server and the outcome
/// the protocol prescribes. `run` sends the input and checks the answer;
/// `ConformanceRunner` wraps it with the checks every case shares (a second
/// connection still works, the stored data did not change).
public struct ConformanceCase: Sendable, Identifiable {
    /// The catalogue's sections, in the order of the SPEC table.
    public enum Group: String, Sendable, CaseIterable {
        case framing = "Framing"
        case handshake = "Handshake"
        case encoding = "Body encoding"
        case limits = "Limits"
        case store = "Lists and items"
        case transport = "Transport"
        case snapshots = "Snapshots (EXPORT, IMPORT)"
        case access = "Access control"
        case happyPath = "Happy path"
    }

    /// What the target must offer for the case to run.
    public enum Requirement: Sendable, Hashable {
        case none
        /// A server with access control and its token (`--token`).
        case token
        /// Two tokens of two different namespaces (`--token`, `--second-token`).
        case twoNamespaces
    }

    /// Short stable name, e.g. `length-below-header`.
    public let id: String
    public let group: Group
    /// The input, in words (the SPEC table's "input" column).
    public let input: String
    public let outcome: Outcome
    public let requirement: Requirement
    let body: @Sendable (CaseContext) throws -> Void

    /// A case; `body` sends the input and checks the answer (throwing
    /// `CaseFailure` on a mismatch), usually with `CaseContext.expectOutcome`.
    public init(_ id: String, _ group: Group, _ input: String, _ outcome: Outcome, requires requirement: Requirement = .none,
                _ body: @escaping @Sendable (CaseContext) throws -> Void) {
        self.id = id
        self.group = group
        self.input = input
        self.outcome = outcome
        self.requirement = requirement
        self.body = body
    }

    /// Whether this case is a hostile or invalid input (every group but the happy path).
    public var isBadInput: Bool { group != .happyPath }
}

/// A case's result.
public struct CaseFailure: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Where to find the server under test and how to talk to it.
public struct Target: Sendable {
    public var host: String
    public var port: UInt16
    /// The token to present (namespace A); nil for a server without access control.
    public var token: String?
    /// A token of a second namespace (B), for the isolation cases.
    public var secondToken: String?
    /// How long the idle cases stay silent.
    public var idle: Duration
    /// The longest any single answer may take.
    public var timeout: Duration
    /// With a client context, every connection speaks TLS (and must verify
    /// the server's certificate); nil: plaintext.
    public var tls: TLSContext?

    public init(host: String, port: UInt16, token: String? = nil, secondToken: String? = nil,
                idle: Duration = .seconds(2), timeout: Duration = .seconds(10), tls: TLSContext? = nil) {
        self.host = host
        self.port = port
        self.token = token
        self.secondToken = secondToken
        self.idle = idle
        self.timeout = timeout
        self.tls = tls
    }

    /// A new connection to the target (plaintext or TLS), before HELLO.
    public func connect() throws -> FrameSocket {
        try FrameSocket(host: host, port: port, timeout: timeout, tls: tls)
    }

    /// Whether this target can run a case with `requirement`.
    public func satisfies(_ requirement: ConformanceCase.Requirement) -> Bool {
        switch requirement {
        case .none: return true
        case .token: return token != nil
        case .twoNamespaces: return token != nil && secondToken != nil
        }
    }
}
