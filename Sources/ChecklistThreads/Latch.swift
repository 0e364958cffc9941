/// A count-down latch a thread can wait on with a deadline (`TCPServer`
/// waits for its loops with one, tests wait for callbacks). Built on
/// `ConditionLock`, the package's one deadline wait.
package final class Latch: Sendable {
    private let remaining: ConditionLock<Int>

    /// A latch that opens after `count` calls to `countDown` (at once if
    /// `count` is zero or less).
    package init(count: Int) {
        remaining = ConditionLock(count)
    }

    /// Counts one down; opening the latch wakes every waiter.
    package func countDown() {
        let reachedZero = remaining.withLock { count -> Bool in
            count -= 1
            return count == 0
        }
        if reachedZero { remaining.broadcast(.progress) }
    }

    /// Waits until the count is zero or `deadline` passes; true if it reached zero.
    package func wait(until deadline: ContinuousClock.Instant) -> Bool {
        remaining.withLock(waitingOn: .progress, until: { $0 <= 0 }, deadline: deadline) { _, reached in reached }
    }
}
