import Synchronization

/// The connections whose answers wait for the log to become durable
/// (`--fsync always`), and the wake-up when it does: the log's flusher
/// calls `durable(_:)` after each fsync, and every connection waiting for
/// no more than that is woken on its own event loop.
final class DurabilityWaiters: Sendable {
    /// Wakes one connection on its loop, with the durable LSN.
    typealias Wake = @Sendable (UInt64) -> Void

    private struct Waiter {
        var lsn: UInt64
        var wake: Wake
    }

    private let waiting = Mutex<[UInt64: Waiter]>([:])
    private let durableLSN = Atomic<UInt64>(0)

    /// The highest LSN known durable.
    var durable: UInt64 { durableLSN.load(ordering: .acquiring) }

    /// Registers (or updates) connection `id` as waiting for `lsn`. If the
    /// log is already that far, wakes it at once.
    func wait(id: UInt64, for lsn: UInt64, wake: @escaping Wake) {
        waiting.withLock { $0[id] = Waiter(lsn: lsn, wake: wake) }
        // The flusher may have passed `lsn` before the registration.
        let now = durableLSN.load(ordering: .acquiring)
        if now >= lsn { durable(now) }
    }

    func cancel(id: UInt64) {
        _ = waiting.withLock { $0.removeValue(forKey: id) }
    }

    /// The log is durable up to `lsn`: wake everyone waiting for no more.
    func durable(_ lsn: UInt64) {
        durableLSN.store(max(lsn, durableLSN.load(ordering: .relaxed)), ordering: .releasing)
        let ready = waiting.withLock { w -> [Wake] in
            let ids = w.filter { $0.value.lsn <= lsn }.map(\.key)
            return ids.compactMap { w.removeValue(forKey: $0)?.wake }
        }
        for wake in ready { wake(lsn) }
    }
}
