import ChecklistThreads
import Glibc

/// Bounds how long a blocking libpq call may wait for PostgreSQL's answer
/// on a link that passes no bytes while its sockets stay open (a hung
/// proxy, a frozen server): TCP keepalives never fire there, since the
/// peer's kernel still acknowledges, and `statement_timeout` is the
/// server's, which then cannot answer either. A call armed here whose
/// deadline passes has its socket shut down (`shutdown(2)`, both ways), so
/// libpq's wait ends at once with the connection lost; the connection's
/// owner then drops it and reconnects (docs/POSTGRES.md, "A dead link").
///
/// One process-wide thread, started on first use, sleeps until the
/// earliest deadline. `arm` and `disarm` take its lock for a dictionary
/// update; the descriptor is only shut down, never closed, so it stays the
/// connection's until `PQfinish`.
final class ReplyWatchdog: Sendable {
    static let shared = ReplyWatchdog()

    private struct Armed {
        var socket: Int32
        var deadline: UInt64
    }

    private struct State {
        var armed: [UInt64: Armed] = [:]
        var nextToken: UInt64 = 0
        var fired: Set<UInt64> = []
        var started = false
    }

    private let state = ConditionLock(State())

    /// Arms a deadline for `socket`, `limit` from now; returns the token
    /// to `disarm` with.
    func arm(socket: Int32, limit: Duration) -> UInt64 {
        let (seconds, attoseconds) = limit.components
        let deadline = monotonicNanoseconds() &+ UInt64(max(0, seconds)) &* 1_000_000_000 &+ UInt64(max(0, attoseconds) / 1_000_000_000)
        let (token, start) = state.withLock { s -> (UInt64, Bool) in
            s.nextToken &+= 1
            s.armed[s.nextToken] = Armed(socket: socket, deadline: deadline)
            defer { s.started = true }
            return (s.nextToken, !s.started)
        }
        if start {
            NativeThread.spawn(name: "pg-watchdog") { [self] in run() }.detach()
        }
        state.signal(.work)
        return token
    }

    /// Ends the deadline `token`; true when it had passed (the socket was shut down).
    func disarm(_ token: UInt64) -> Bool {
        state.withLock { s in
            s.armed.removeValue(forKey: token)
            return s.fired.remove(token) != nil
        }
    }

    private func run() {
        var earliest: UInt64?
        while true {
            state.withLock(waitingOn: .work, until: { s in
                guard let first = s.armed.values.map(\.deadline).min() else { return false }
                return first <= monotonicNanoseconds() || first != earliest
            }, deadline: earliest) { s, _ in
                let now = monotonicNanoseconds()
                for (token, armed) in s.armed where armed.deadline <= now {
                    // Under the lock: once `disarm` returned, the descriptor
                    // (which its owner may then close, and the number be
                    // reused) is never touched here.
                    _ = Glibc.shutdown(armed.socket, Int32(SHUT_RDWR))
                    s.fired.insert(token)
                    s.armed.removeValue(forKey: token)
                }
                earliest = s.armed.values.map(\.deadline).min()
            }
        }
    }
}
