import ChecklistLog
import Synchronization

/// Refused authentications counted by reason (STATS, `/metrics`
/// `checklistd_auth_refused_total{reason=...}`) and logged
/// (`event=auth_refused reason=...`, never the token).
///
/// Shared by every connection. Locking rule: `counts` and `log` are each
/// read and changed only under their own lock; refusals are rare, so the
/// lock is not contended on a hot path.
final class AccessRefusals: Sendable {
    private let counts = Mutex<[AccessRefusal.Reason: UInt64]>([:])
    private let logger = Mutex<ServerLog?>(nil)

    /// Where refusals are logged from now on (the server's log).
    func attach(_ log: ServerLog) {
        logger.withLock { $0 = log }
    }

    /// Counts `refusal` and logs it.
    func record(_ refusal: AccessRefusal) {
        counts.withLock { $0[refusal.reason, default: 0] += 1 }
        logger.withLock { $0 }?.info("auth_refused", ["reason": refusal.reason.description, "detail": refusal.message])
    }

    /// The count of every reason, in `AccessRefusal.Reason.all`'s order (zeros included).
    var snapshot: [(reason: String, count: UInt64)] {
        let counts = counts.withLock { $0 }
        return AccessRefusal.Reason.all.map { ($0.description, counts[$0] ?? 0) }
    }
}
