import Synchronization

/// State a test's tasks wait on: every access through `withLock` wakes the
/// waiters whose condition then holds, so a test waits for the event
/// itself instead of polling for it.
final class AwaitedState<State: Sendable>: Sendable {
    typealias Condition = @Sendable (State) -> Bool

    private struct Waiter {
        let id: UInt64
        let ready: Condition
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct Inner {
        var state: State
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
        /// Waiters whose deadline passed before they were registered.
        var expired: Set<UInt64> = []
    }

    private let inner: Mutex<Inner>

    init(_ state: State) {
        inner = Mutex(Inner(state: state))
    }

    /// Reads or changes the state, then resumes the waiters it satisfies
    /// (outside the lock).
    func withLock<T>(_ body: (inout State) -> T) -> T {
        let (value, ready) = inner.withLock { inner -> (T, [Waiter]) in
            let value = body(&inner.state)
            let state = inner.state
            var ready: [Waiter] = []
            inner.waiters.removeAll { waiter in
                guard waiter.ready(state) else { return false }
                ready.append(waiter)
                return true
            }
            return (value, ready)
        }
        for waiter in ready { waiter.continuation.resume(returning: true) }
        return value
    }

    /// Waits until `ready` holds for the state; false after `timeout`.
    func wait(timeout: Duration, until ready: @escaping Condition) async -> Bool {
        let id = inner.withLock { inner -> UInt64 in
            defer { inner.nextID += 1 }
            return inner.nextID
        }
        let deadline = Task { [self] in
            try await Task.sleep(for: timeout)
            expire(id)
        }
        defer { deadline.cancel() }
        return await withCheckedContinuation { continuation in
            let answer = inner.withLock { inner -> Bool? in
                if ready(inner.state) { return true }
                if inner.expired.remove(id) != nil { return false }
                inner.waiters.append(Waiter(id: id, ready: ready, continuation: continuation))
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    private func expire(_ id: UInt64) {
        let waiter = inner.withLock { inner -> Waiter? in
            guard let index = inner.waiters.firstIndex(where: { $0.id == id }) else {
                inner.expired.insert(id)
                return nil
            }
            return inner.waiters.remove(at: index)
        }
        waiter?.continuation.resume(returning: false)
    }
}
