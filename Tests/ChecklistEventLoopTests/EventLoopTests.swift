@testable import ChecklistEventLoop
import ChecklistThreads
import Glibc
import Synchronization
import Testing

@Suite("EventLoop", .serialized, .timeLimit(.minutes(1)))
struct EventLoopTests {
    @Test func executeRunsTasksOnTheLoopInOrder() throws {
        let group = try EventLoopGroup(threads: 2)
        group.start()
        defer { group.shutdownAndJoin() }
        let loop = group.loops[1]
        #expect(!loop.inEventLoop)
        let seen = Mutex<[Int]>([])
        let onLoop = Atomic<Int>(0)
        let done = Latch(count: 1)
        // From several threads at once; each thread's tasks keep their order.
        onThreads(4) { thread in
            for i in 0..<1000 {
                loop.execute {
                    if loop.inEventLoop { onLoop.add(1, ordering: .relaxed) }
                    seen.withLock { $0.append(thread * 10_000 + i) }
                }
            }
        }
        loop.execute { done.countDown() }
        #expect(done.wait(seconds: 10))
        #expect(onLoop.load(ordering: .relaxed) == 4000)
        let all = seen.withLock { $0 }
        for thread in 0..<4 {
            let mine = all.filter { $0 / 10_000 == thread }
            #expect(mine == (0..<1000).map { thread * 10_000 + $0 })
        }
    }

    @Test func tasksQueuedFromTheLoopItselfRun() throws {
        let group = try EventLoopGroup(threads: 1)
        group.start()
        defer { group.shutdownAndJoin() }
        let loop = group.loops[0]
        let done = Latch(count: 1)
        loop.execute {
            loop.execute { loop.execute { done.countDown() } }
        }
        #expect(done.wait(seconds: 10))
    }

    /// Turn-end work (`atTurnEnd`) runs after the work that asked for it,
    /// and work it asks for in turn runs in the same iteration: the loop,
    /// with nothing else to wake it, would otherwise wait for ever.
    @Test func turnEndObserversRunAfterTheTurnAndBeforeTheWait() throws {
        final class Observer: LoopTurnObserver, Sendable {
            let loop: EventLoop
            let seen = Mutex<[String]>([])
            let again = Atomic<Bool>(true)
            let done = Latch(count: 1)
            init(loop: EventLoop) { self.loop = loop }
            func loopTurnEnds() {
                seen.withLock { $0.append("end") }
                if again.exchange(false, ordering: .relaxed) { loop.atTurnEnd(self) } else { done.countDown() }
            }
        }
        let group = try EventLoopGroup(threads: 1)
        group.start()
        defer { group.shutdownAndJoin() }
        let observer = Observer(loop: group.loops[0])
        group.loops[0].execute {
            observer.seen.withLock { $0.append("a") }
            observer.loop.atTurnEnd(observer)
            observer.seen.withLock { $0.append("b") }
        }
        #expect(observer.done.wait(seconds: 10))
        #expect(observer.seen.withLock { $0 } == ["a", "b", "end", "end"])
    }

    @Test func timersFireAndCanBeCancelled() throws {
        let group = try EventLoopGroup(threads: 1)
        group.start()
        defer { group.shutdownAndJoin() }
        let loop = group.loops[0]
        let ticks = Atomic<Int>(0)
        let threeTicks = Latch(count: 3)
        let timer = loop.scheduleRepeating(every: .milliseconds(20)) {
            ticks.add(1, ordering: .relaxed)
            threeTicks.countDown()
        }
        let once = Latch(count: 1)
        let start = ContinuousClock.now
        loop.schedule(after: .milliseconds(50)) { once.countDown() }
        #expect(once.wait(seconds: 10))
        #expect(ContinuousClock.now - start >= .milliseconds(50))
        #expect(threeTicks.wait(seconds: 10))
        timer.cancel()
        // After a cancel has been processed (a task queued behind it), no more ticks.
        let cancelled = Latch(count: 1)
        loop.execute { cancelled.countDown() }
        #expect(cancelled.wait(seconds: 10))
        let after = ticks.load(ordering: .relaxed)
        let probe = Latch(count: 1)
        loop.schedule(after: .milliseconds(100)) { probe.countDown() }
        #expect(probe.wait(seconds: 10))
        #expect(ticks.load(ordering: .relaxed) == after)
    }

    @Test func executeAfterShutdownIsRefused() throws {
        let group = try EventLoopGroup(threads: 1)
        group.start()
        let ran = Latch(count: 1)
        group.loops[0].execute { ran.countDown() }
        group.shutdownAndJoin()
        #expect(ran.wait(seconds: 0))  // queued before the stop: ran
        #expect(group.loops[0].execute {} == false)
    }

    @Test func signalWatcherCallsBack() throws {
        let received = Mutex<[Int32]>([])
        let got = Latch(count: 2)
        let watcher = try SignalWatcher(signals: [SIGHUP, SIGUSR2]) { signal in
            received.withLock { $0.append(signal) }
            got.countDown()
        }
        watcher.deliverToWatcher(SIGHUP)
        watcher.deliverToWatcher(SIGUSR2)
        #expect(got.wait(seconds: 10))
        #expect(Set(received.withLock { $0 }) == [SIGHUP, SIGUSR2])
        watcher.stop()
        watcher.stop()  // idempotent
    }
}
