#if canImport(Glibc)
import Glibc
#endif
import ChecklistSocket
import Synchronization

/// A fixed set of event loops, one thread each.
///
/// Lifecycle: `init` → `start()` → ... → `shutdown()` → `join()`. A
/// `TCPServer` should be shut down (gracefully) before its group.
public final class EventLoopGroup: Sendable {
    public let loops: [EventLoop]
    private let nextIndex = Atomic<Int>(0)

    /// Number of online cores; the default thread count.
    public static var defaultThreadCount: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    /// Makes `threads` loops (not yet running).
    public init(threads: Int = EventLoopGroup.defaultThreadCount) throws(SocketError) {
        precondition(threads > 0, "an EventLoopGroup needs at least one thread")
        var loops: [EventLoop] = []
        for index in 0..<threads { loops.append(try EventLoop(index: index)) }
        self.loops = loops
    }

    /// Starts every loop thread. Idempotent.
    public func start() {
        for loop in loops { loop.start() }
    }

    /// Loops in turn (round-robin). Safe from any thread.
    public func next() -> EventLoop {
        loops[nextIndex.wrappingAdd(1, ordering: .relaxed).oldValue % loops.count]
    }

    /// The loop whose thread is the caller's, if any.
    public var currentEventLoop: EventLoop? {
        loops.first { $0.inEventLoop }
    }

    /// Asks every loop to stop (see `EventLoop.shutdown()`).
    public func shutdown() {
        for loop in loops { loop.shutdown() }
    }

    /// Waits for every loop thread to end. Not on a loop thread.
    public func join() {
        for loop in loops { loop.join() }
    }

    /// `shutdown()` then `join()`.
    public func shutdownAndJoin() {
        shutdown()
        join()
    }
}
