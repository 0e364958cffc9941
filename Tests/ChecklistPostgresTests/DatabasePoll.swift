import Glibc

/// Asks `condition` every `interval` until it holds or `limit` passes, and
/// says whether it held: for states PostgreSQL raises no event for, such as
/// a backend waiting on a lock (read from pg_stat_activity or pg_locks).
func pollDatabase(every interval: Duration, for limit: Duration = .seconds(30),
                  until condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now + limit
    while true {
        if try condition() { return true }
        guard ContinuousClock.now < deadline else { return false }
        usleep(useconds_t(interval.components.seconds * 1_000_000 + interval.components.attoseconds / 1_000_000_000_000))
    }
}
