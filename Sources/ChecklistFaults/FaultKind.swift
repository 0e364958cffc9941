/// The faults the nemesis knows, selectable with `--faults`.
public enum FaultKind: String, Sendable, CaseIterable, Hashable, Comparable {
    /// `kill -9` of a node, then its restart on the same port.
    case kill
    /// SIGSTOP of a node, then SIGCONT.
    case pause
    /// SIGTERM of a node (it drains), then its restart.
    case term
    /// The node's link to PostgreSQL resets every connection (and refuses
    /// new ones) until healed.
    case reset
    /// The node's link to PostgreSQL stops passing bytes, sockets open,
    /// until healed.
    case stall
    /// PostgreSQL restarted with `pg_ctl restart -m immediate`.
    case pgrestart

    /// Every kind: the default of `--faults`.
    public static let all = Set(allCases)

    /// What it does, for `--help` and the report.
    public var summary: String {
        switch self {
        case .kill: return "kill -9 of a node, then its restart"
        case .pause: return "SIGSTOP of a node, then SIGCONT"
        case .term: return "SIGTERM of a node (drain), then its restart"
        case .reset: return "a node's link to PostgreSQL resets its connections, then heals"
        case .stall: return "a node's link to PostgreSQL passes no bytes (sockets open), then heals"
        case .pgrestart: return "PostgreSQL restarted with pg_ctl restart -m immediate"
        }
    }

    public static func < (a: FaultKind, b: FaultKind) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// Parses `all`, `none`, or a comma-separated list of kinds.
    public static func parse(_ text: String) throws -> Set<FaultKind> {
        switch text {
        case "all": return all
        case "none", "": return []
        default:
            var kinds = Set<FaultKind>()
            for name in text.split(separator: ",") {
                guard let kind = FaultKind(rawValue: String(name)) else {
                    throw FaultRunError("unknown fault kind \"\(name)\" (known: \(allCases.map(\.rawValue).joined(separator: ", ")), all, none)")
                }
                kinds.insert(kind)
            }
            return kinds
        }
    }
}

/// The harness could not do what it was asked (a bad option, a cluster or
/// node that would not start).
public struct FaultRunError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
