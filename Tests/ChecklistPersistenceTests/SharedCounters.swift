import Synchronization

/// Counts calls, thread-safely.
final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func increment() { value.add(1, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}

/// A value shared between threads.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<T>(_ body: (inout Value) -> T) -> T { mutex.withLock { body(&$0) } }
    var value: Value { mutex.withLock { $0 } }
}
