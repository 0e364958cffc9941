import Synchronization

/// A few reusable objects of one kind (C library handles with their
/// buffers), lent to one caller at a time: `with` takes a free one, or
/// makes one when none is free, and puts it back afterwards, keeping at
/// most `capacity` free ones. Concurrent callers get different objects, so
/// an object is never used by two threads at once.
final class ReusePool<Object: AnyObject & Sendable>: Sendable {
    private let free = Mutex<[Object]>([])
    private let capacity: Int
    private let make: @Sendable () -> Object?

    init(capacity: Int, make: @escaping @Sendable () -> Object?) {
        self.capacity = capacity
        self.make = make
    }

    /// Lends an object to `body`; nil when none is free and `make` failed.
    func with<R, E: Error>(_ body: (Object?) throws(E) -> R) throws(E) -> R {
        let object = free.withLock { $0.popLast() } ?? make()
        defer {
            if let object {
                free.withLock { free in
                    if free.count < capacity { free.append(object) }
                }
            }
        }
        return try body(object)
    }
}
