#if canImport(Glibc)
import Glibc
#endif
import ChecklistIO
import ChecklistSocket
import ChecklistThreads
import Synchronization

/// Work a loop does once at the end of a turn, before it flushes its
/// connections' output (`EventLoop.atTurnEnd`): what the turn's events
/// gathered, done once for all of them (the server applies the PATCHes of
/// every connection read in the turn under one hold of the store's lock).
/// Called on the loop thread only.
package protocol LoopTurnObserver: AnyObject {
    /// The turn's events are dispatched; do the gathered work now.
    func loopTurnEnds()
}

/// Something registered with a loop's readiness set. Called on the loop thread only.
package protocol Selectable: AnyObject {
    /// The descriptor became ready; `events` is an `EpollMask` mask.
    func handleEvents(_ events: UInt32)
    /// The loop is stopping: release the descriptor now.
    func loopWillClose()
}

/// One thread waiting on ChecklistIO's readiness layer (epoll on Linux, or
/// `poll(2)` when `CHECKLIST_READINESS=poll`), owning every descriptor
/// registered with it. The loop adds its policy (tasks, timers, the
/// end-of-batch flush); the waiting is ChecklistIO's, shared with the
/// client library and the benchmark.
///
/// Each registration carries a token `generation << 32 | fd`, so an event
/// that was already fetched for a descriptor closed (and maybe reused)
/// earlier in the same batch is recognised as stale and dropped.
///
/// Threading rules:
/// - `execute`, `schedule*`, `inEventLoop` and the `assert`/`precondition`
///   helpers may be called from any thread.
/// - Everything else in this module that takes a loop (connections, the
///   acceptor, timers' bookkeeping) runs on the loop thread only. Such state
///   lives in `LoopState`, reached through `loopState` (asserted in debug).
///
/// One iteration: wait for events (the timeout is the next timer deadline),
/// dispatch them, end the turn (`atTurnEnd`), run queued tasks, run due
/// timers, end the turn again for what those asked, then flush the output
/// of every connection that was written to (and end the turn and flush
/// again while the flush itself asks for more). Flushing once at the end of
/// the batch lets a pipelined burst go out in a few large `send`s.
public final class EventLoop: Sendable, CustomStringConvertible {
    /// Position of this loop in its group (0 for a standalone loop).
    public let index: Int
    /// Which readiness implementation the loop runs on.
    public let readinessKind: ReadinessKind
    /// The loop's readiness set. `nonisolated(unsafe)` because it is not
    /// Sendable: it is created here, then registered with, waited on and
    /// closed only by the loop thread (`register`, `reregister` and
    /// `deregister` are loop-thread only, asserted in debug) and released
    /// in `deinit`, when no thread holds the loop any more.
    nonisolated(unsafe) private let selector: any Readiness
    /// Wakes the loop's wait from any thread.
    private let wakeup: ReadinessWaker
    private let queue = Mutex(TaskQueue())
    private let thread = Mutex<NativeThread?>(nil)
    /// `pthread_self()` of the loop thread once it runs; 0 before.
    private let owner = Atomic<UInt>(0)
    /// Loop-thread-only state. `nonisolated(unsafe)` because it is not
    /// Sendable: it is created here and from then on read and written only by
    /// the loop thread (all access goes through `loopState`, asserted in debug,
    /// or through `run`, which is that thread).
    nonisolated(unsafe) private let _state = LoopState()
    private let nextTimerID = Atomic<UInt64>(1)

    /// Events one wait reports at most.
    private static let eventCapacity = 256

    /// Makes a loop (its readiness set and wake-up) on `readiness` (by
    /// default the one `CHECKLIST_READINESS` names, else the platform's);
    /// call `start()` to run it.
    public init(index: Int = 0, readiness: ReadinessKind = .configured) throws(SocketError) {
        self.index = index
        self.readinessKind = readiness
        self.selector = try readiness.make(capacity: Self.eventCapacity)
        self.wakeup = selector.waker
    }

    deinit { selector.close() }

    public var description: String { "EventLoop(\(index))" }

    // MARK: Threads

    /// True on this loop's thread.
    public var inEventLoop: Bool {
        owner.load(ordering: .acquiring) == UInt(pthread_self())
    }

    /// Debug-build check that the caller is on this loop's thread.
    @inlinable
    public func assertInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(inEventLoop, "not on \(self)'s thread", file: file, line: line)
    }

    /// Check, in every build, that the caller is on this loop's thread.
    public func preconditionInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
        precondition(inEventLoop, "not on \(self)'s thread", file: file, line: line)
    }

    /// Starts the loop thread (once; later calls do nothing).
    public func start() {
        thread.withLock { thread in
            guard thread == nil else { return }
            thread = NativeThread.spawn(name: "checklist-io-\(index)") { [self] in run() }
        }
    }

    /// Asks the loop to stop after the current iteration. Tasks already queued
    /// still run; `execute` refuses new ones once the loop has stopped. Every
    /// descriptor still registered then is closed (connections are aborted and
    /// their handlers told).
    public func shutdown() {
        let wake = queue.withLock { queue -> Bool in
            queue.stopRequested = true
            return queue.accepting
        }
        if wake { wakeup.wake() }
    }

    /// Waits for the loop thread to finish. Must not be called on it.
    public func join() {
        precondition(!inEventLoop, "a loop cannot join itself")
        let started = thread.withLock { $0 }
        started?.join()
    }

    // MARK: Tasks

    /// Runs `task` on the loop thread, after the events of the current
    /// iteration. Safe from any thread, including the loop itself.
    ///
    /// - Returns: false (and drops `task`) if the loop has already stopped.
    @discardableResult
    public func execute(_ task: @escaping @Sendable () -> Void) -> Bool {
        let (accepted, wake) = queue.withLock { queue -> (Bool, Bool) in
            guard queue.accepting else { return (false, false) }
            queue.tasks.append(task)
            if queue.wakeupPending { return (true, false) }
            queue.wakeupPending = true
            return (true, true)
        }
        if wake { wakeup.wake() }
        return accepted
    }

    package func makeTimerID() -> UInt64 {
        nextTimerID.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    // MARK: Loop-thread-only API

    /// The loop-confined state. Loop thread only (asserted in debug).
    package var loopState: LoopState {
        assertInEventLoop()
        return _state
    }

    /// The time taken after the last wait returned; cheap "now" for
    /// timestamps that need no better than event-batch precision.
    package var now: ContinuousClock.Instant { loopState.now }

    /// `now` as the time since `origin`: a plain `Duration`, cheap to keep
    /// per connection and per request (see `SocketConnection.lastInput`).
    var sinceOrigin: Duration { loopState.sinceOrigin }

    /// When the loop's clock starts (`sinceOrigin`).
    package var origin: ContinuousClock.Instant { _state.origin }

    /// The time since `origin`, read from the clock now (`sinceOrigin` is
    /// the turn's): for timing requests in plain `Duration`s, where every
    /// copy or test of an optional `ContinuousClock.Instant` (a resilient
    /// type) goes through the runtime.
    package var elapsed: Duration { ContinuousClock.now - _state.origin }

    /// Registers `fd` with `interest`; events go to `handler`. Loop thread only.
    package func register(_ fd: Int32, interest: UInt32, handler: any Selectable) throws(SocketError) {
        let state = loopState
        state.nextGeneration &+= 1
        let generation = state.nextGeneration
        try selector.register(fd, token: Self.token(fd, generation), interest: ReadinessInterest(rawValue: interest))
        if state.registrations.count <= Int(fd) {
            state.registrations.append(contentsOf: repeatElement(nil, count: Int(fd) + 1 - state.registrations.count))
        }
        state.registrations[Int(fd)] = LoopState.Registration(generation: generation, handler: handler)
    }

    /// Changes the interest mask of a registered `fd`. Loop thread only.
    package func reregister(_ fd: Int32, interest: UInt32) throws(SocketError) {
        guard let registration = loopState.registrations[Int(fd)] else { return }
        try selector.update(fd, token: Self.token(fd, registration.generation), interest: ReadinessInterest(rawValue: interest))
    }

    /// Removes `fd` from the readiness set; call before closing it. Loop thread only.
    package func deregister(_ fd: Int32) {
        let state = loopState
        guard Int(fd) < state.registrations.count, state.registrations[Int(fd)] != nil else { return }
        selector.deregister(fd)
        state.registrations[Int(fd)] = nil
    }

    /// Queues `connection` for the end-of-iteration flush. Loop thread only.
    package func scheduleFlush(_ connection: SocketConnection) {
        loopState.dirty.append(connection)
    }

    /// Has `observer.loopTurnEnds()` called once the events being
    /// dispatched are all handled, before the output is flushed: in the
    /// same iteration, whatever calls this (an event, a task, a timer, a
    /// flush). Ask once per turn: each call is one more call of the
    /// observer. Loop thread only.
    package func atTurnEnd(_ observer: any LoopTurnObserver) {
        loopState.turnEnd.append(observer)
    }

    private static func token(_ fd: Int32, _ generation: UInt32) -> UInt64 {
        UInt64(generation) << 32 | UInt64(UInt32(bitPattern: fd))
    }

    // MARK: The loop

    private func run() {
        owner.store(UInt(pthread_self()), ordering: .releasing)
        let state = _state
        state.takeTime()
        var stopping = false
        while !stopping {
            let milliseconds = state.millisecondsUntilNextTimer()
            do throws(SocketError) {
                // Events are dispatched as they are reported: the time of
                // the batch is taken before the first.
                var timed = false
                try selector.wait(timeout: milliseconds < 0 ? nil : .milliseconds(milliseconds)) { event in
                    if !timed {
                        state.takeTime()
                        timed = true
                    }
                    dispatch(event, state)
                }
                if !timed { state.takeTime() }
                // Before the tasks: the turn's commits publish pushes to
                // them, as commits made in the events themselves would.
                endTurn(state)
            } catch {
                // A server loop cannot go on without its wait; as before,
                // an unexpected failure of it (not EINTR) stops the process.
                preconditionFailure("\(self): the readiness wait failed: \(error)")
            }
            stopping = runQueuedTasks(state)
            runDueTimers(state)
            endTurnAndFlush(state)
        }
        // Stop taking tasks, run what was queued, then close what is left.
        queue.withLock { $0.accepting = false }
        _ = runQueuedTasks(state)
        endTurnAndFlush(state)
        for registration in state.registrations.compactMap({ $0 }) {
            registration.handler.loopWillClose()
        }
        state.timers.removeAll()
        // pthread ids are reused by later threads: forget ours.
        owner.store(0, ordering: .releasing)
    }

    private func dispatch(_ event: ReadinessEvent, _ state: LoopState) {
        let token = event.token
        let fd = Int(Int32(bitPattern: UInt32(truncatingIfNeeded: token)))
        guard fd < state.registrations.count, let registration = state.registrations[fd],
              registration.generation == UInt32(truncatingIfNeeded: token >> 32) else { return }
        registration.handler.handleEvents(event.events.rawValue)
    }

    /// Runs the queued tasks; returns whether a stop was requested.
    private func runQueuedTasks(_ state: LoopState) -> Bool {
        var batch = state.spareTasks
        let stop = queue.withLock { queue -> Bool in
            swap(&batch, &queue.tasks)
            queue.wakeupPending = false
            return queue.stopRequested
        }
        for task in batch { task() }
        batch.removeAll(keepingCapacity: true)
        state.spareTasks = batch
        return stop
    }

    /// Calls the observers asked for this turn (`atTurnEnd`), and those
    /// they ask for in turn.
    private func endTurn(_ state: LoopState) {
        while !state.turnEnd.isEmpty {
            var observers = state.spareObservers
            swap(&observers, &state.turnEnd)
            for observer in observers { observer.loopTurnEnds() }
            observers.removeAll(keepingCapacity: true)
            state.spareObservers = observers
        }
    }

    /// Ends the turn and flushes, until a flush (which can call handlers:
    /// back-pressure released) leaves no turn-end work: nothing a handler
    /// gathered waits past this iteration, whose wait may be long.
    private func endTurnAndFlush(_ state: LoopState) {
        repeat {
            endTurn(state)
            flushConnections(state)
        } while !state.turnEnd.isEmpty
    }

    private func flushConnections(_ state: LoopState) {
        // Flushing can call handlers (back-pressure released), which can write
        // and so append to `dirty`: walk by index until it stops growing.
        var i = 0
        while i < state.dirty.count {
            let connection = state.dirty[i]
            i += 1
            connection.flushScheduled()
        }
        state.dirty.removeAll(keepingCapacity: state.dirty.capacity <= 4096)
    }
}

/// The task queue, guarded by `EventLoop.queue`'s Mutex.
private struct TaskQueue {
    var tasks: [@Sendable () -> Void] = []
    /// The loop was woken and has not taken the tasks yet.
    var wakeupPending = false
    var stopRequested = false
    /// False once the loop has stopped: `execute` refuses tasks.
    var accepting = true
}

/// State owned by a loop thread. Not Sendable, never shared.
package final class LoopState {
    package struct Registration {
        package var generation: UInt32
        package var handler: any Selectable
    }

    /// Indexed by descriptor number.
    package var registrations: [Registration?] = []
    package var nextGeneration: UInt32 = 0
    var timers: [LoopTimer] = []
    /// Connections written to since the last flush.
    package var dirty: [SocketConnection] = []
    /// Reused task array, so draining the queue allocates nothing once warm.
    package var spareTasks: [@Sendable () -> Void] = []
    /// Observers to call at the end of this turn (`EventLoop.atTurnEnd`).
    var turnEnd: [any LoopTurnObserver] = []
    /// Reused observer array, as `spareTasks`.
    var spareObservers: [any LoopTurnObserver] = []
    /// When this loop's clock starts: `sinceOrigin` counts from it.
    package let origin: ContinuousClock.Instant = .now
    /// The time taken after the last wait returned.
    package private(set) var now: ContinuousClock.Instant
    /// `now - origin`.
    private(set) var sinceOrigin: Duration = .zero

    init() { now = origin }

    /// Takes the time (`now`, `sinceOrigin`): once per event batch.
    func takeTime() {
        now = .now
        sinceOrigin = now - origin
    }
}
