import ChecklistLog
import ChecklistModel

/// The load limits a protocol connection enforces, and where it reports
/// (Protocol/SPEC.md sections 1 and 4; `checklistd --help`).
struct ConnectionPolicy: Sendable {
    /// Close a connection that has sent nothing, or read none of its
    /// answers, for this long; nil: never.
    var idleTimeout: Duration?
    /// Requests of one connection worked on at once (read but not yet
    /// answered to the network); further ones wait unread.
    var maxInFlight: Int
    /// Requests that take longer are logged (`event=slow_request`).
    var slowRequest: Duration
    /// Pending output past which the connection is aborted (for logging which limit hit).
    var maxOutputBytes: Int
    /// The server's connection limit (for logging).
    var maxConnections: Int
    let log: ServerLog
    let metrics: ServerMetrics
}
