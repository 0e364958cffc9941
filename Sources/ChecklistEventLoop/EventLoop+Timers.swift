import Synchronization

/// A timer on one loop, cancellable from any thread.
public struct EventLoopTimer: Sendable, Hashable {
    let id: UInt64
    public let eventLoop: EventLoop

    /// Stops the timer; a run already started finishes. Safe from any thread.
    public func cancel() {
        if eventLoop.inEventLoop {
            eventLoop.removeTimer(id)
        } else {
            let id = self.id
            eventLoop.execute { [eventLoop] in eventLoop.removeTimer(id) }
        }
    }

    public static func == (a: EventLoopTimer, b: EventLoopTimer) -> Bool { a.id == b.id && a.eventLoop === b.eventLoop }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// A timer entry in `LoopState.timers`.
struct LoopTimer {
    var id: UInt64
    var deadline: ContinuousClock.Instant
    var interval: Duration?
    var task: () -> Void
}

extension EventLoop {
    /// Runs `task` on this loop every `interval` (first after one interval)
    /// until cancelled. Timers are coarse: they fire on the first loop
    /// iteration after their deadline. Safe from any thread.
    @discardableResult
    public func scheduleRepeating(every interval: Duration, _ task: @escaping @Sendable () -> Void) -> EventLoopTimer {
        precondition(interval > .zero, "a repeating timer needs a positive interval")
        return scheduleTimer(after: interval, repeating: interval, task)
    }

    /// Runs `task` once on this loop after `delay`. Safe from any thread.
    @discardableResult
    public func schedule(after delay: Duration, _ task: @escaping @Sendable () -> Void) -> EventLoopTimer {
        scheduleTimer(after: delay, repeating: nil, task)
    }

    private func scheduleTimer(after delay: Duration, repeating: Duration?, _ task: @escaping @Sendable () -> Void) -> EventLoopTimer {
        let timer = EventLoopTimer(id: makeTimerID(), eventLoop: self)
        if inEventLoop {
            addTimer(id: timer.id, after: delay, repeating: repeating, task)
        } else {
            let start = ContinuousClock.now
            execute { [self] in
                addTimer(id: timer.id, after: delay - (ContinuousClock.now - start), repeating: repeating, task)
            }
        }
        return timer
    }

    /// Loop-thread variant taking a non-Sendable closure.
    @discardableResult
    func addTimer(id: UInt64? = nil, after delay: Duration, repeating: Duration?, _ task: @escaping () -> Void) -> UInt64 {
        let state = loopState
        let id = id ?? makeTimerID()
        state.timers.append(LoopTimer(id: id, deadline: .now + delay, interval: repeating, task: task))
        return id
    }

    func removeTimer(_ id: UInt64) {
        loopState.timers.removeAll { $0.id == id }
    }

    /// Runs every timer whose deadline has passed (loop thread).
    func runDueTimers(_ state: LoopState) {
        guard !state.timers.isEmpty else { return }
        let now = state.now
        let due = state.timers.filter { $0.deadline <= now }
        for timer in due {
            // A task run earlier in this pass may have cancelled this one.
            guard let index = state.timers.firstIndex(where: { $0.id == timer.id }) else { continue }
            if let interval = timer.interval {
                var next = timer.deadline + interval
                if next <= now { next = now + interval }  // fell behind: skip, don't burst
                state.timers[index].deadline = next
            } else {
                state.timers.remove(at: index)
            }
            timer.task()
        }
    }
}

extension LoopState {
    /// The wait's timeout: -1 without timers, else milliseconds (rounded up) to the earliest.
    func millisecondsUntilNextTimer() -> Int32 {
        guard let next = timers.lazy.map(\.deadline).min() else { return -1 }
        let remaining = next - .now
        if remaining <= .zero { return 0 }
        let (seconds, attoseconds) = remaining.components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
    }
}
