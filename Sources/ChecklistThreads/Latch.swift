#if canImport(Glibc)
import Glibc
#endif
import CLinux
import ChecklistSocket
import Synchronization

/// A count-down latch a thread can wait on with a deadline (used by
/// `TCPServer.shutdown` to wait for the loops). The count lives under a
/// Mutex; an eventfd becomes readable when it reaches zero, so waiting is a
/// `poll` with a timeout rather than a spin or a sleep.
final class Latch: Sendable {
    private let remaining: Mutex<Int>
    private let signal: Int32

    init(count: Int) {
        remaining = Mutex(count)
        signal = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        precondition(signal >= 0, "eventfd failed: errno \(errno)")
        if count <= 0 { post() }
    }

    deinit { closeSocket(signal) }

    func countDown() {
        let reachedZero = remaining.withLock { count -> Bool in
            count -= 1
            return count == 0
        }
        if reachedZero { post() }
    }

    /// Waits until the count is zero or `deadline` passes; true if it reached zero.
    func wait(until deadline: ContinuousClock.Instant) -> Bool {
        while true {
            if remaining.withLock({ $0 <= 0 }) { return true }
            let left = deadline - .now
            if left <= .zero { return false }
            let (seconds, attoseconds) = left.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var pfd = pollfd(fd: signal, events: Int16(POLLIN), revents: 0)
            _ = poll(&pfd, 1, milliseconds)
        }
    }

    private func post() {
        var one: UInt64 = 1
        _ = Glibc.write(signal, &one, 8)
    }
}
