/// A first-in first-out queue over an array: `append` at the back,
/// `popFirst` at the front, both amortized O(1), with indexed access from
/// the front. Used for bounded windows (idempotency keys, the change feed).
///
/// `popFirst` moves the element out and frees its slot at once (the array
/// is compacted only now and then, so a popped element must not linger
/// there holding its memory). Inlinable, so that other modules' hot paths
/// (the feed's, per published change) get it specialized for their element
/// instead of generic calls.
public struct FIFO<Element> {
    /// Slots before `head` are empty (popped); the others hold a value.
    @usableFromInline var storage: [Element?] = []
    @usableFromInline var head = 0

    @inlinable public init() {}

    @inlinable public var count: Int { storage.count - head }
    @inlinable public var isEmpty: Bool { count == 0 }
    @inlinable public var first: Element? { head < storage.count ? storage[head] : nil }

    /// The `i`-th element from the front.
    @inlinable public subscript(i: Int) -> Element { storage[head + i]! }

    @inlinable public mutating func append(_ element: Element) { storage.append(element) }

    @inlinable public mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head].take()
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: storage.capacity <= 1024)
            head = 0
        } else if head >= 1024 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    @inlinable public mutating func removeAll(where shouldRemove: (Element) -> Bool) {
        storage.removeFirst(head)
        head = 0
        storage.removeAll { shouldRemove($0!) }
    }
}

extension FIFO: Sendable where Element: Sendable {}
