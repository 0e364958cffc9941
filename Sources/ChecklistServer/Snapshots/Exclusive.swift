import Synchronization

/// A value that is not `Sendable` (an `ExportCursor`, an `ImportStream`)
/// worked on by one thread at a time: its connection's event loop, or the
/// transfer worker that loop handed a chunk to.
///
/// The value lives inside a `Mutex` and is only reachable in `withValue`,
/// whose body may not let it (or anything it references) escape: the
/// compiler checks every hand-over between threads (region isolation), so
/// no `@unchecked` promise is needed. The lock is never contended in
/// practice: a connection dispatches no request while its transfer's chunk
/// is with a worker.
final class Exclusive<Value>: Sendable {
    private let mutex: Mutex<Value>

    /// Takes `value`, which nothing else may keep a reference to.
    init(_ value: consuming sending Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with the value, on the calling thread, holding the lock.
    func withValue<R, E: Error>(_ body: (inout sending Value) throws(E) -> sending R) throws(E) -> sending R {
        try mutex.withLock(body)
    }
}
