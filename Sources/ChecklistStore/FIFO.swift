/// A first-in first-out queue over an array: `append` at the back,
/// `popFirst` at the front, both amortized O(1), with indexed access from
/// the front. Used for bounded windows (idempotency keys, the change feed).
public struct FIFO<Element> {
    private var storage: [Element] = []
    private var head = 0

    public init() {}

    public var count: Int { storage.count - head }
    public var isEmpty: Bool { count == 0 }
    public var first: Element? { head < storage.count ? storage[head] : nil }

    /// The `i`-th element from the front.
    public subscript(i: Int) -> Element { storage[head + i] }

    public mutating func append(_ element: Element) { storage.append(element) }

    public mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
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

    public mutating func removeAll(where shouldRemove: (Element) -> Bool) {
        storage.removeFirst(head)
        head = 0
        storage.removeAll(where: shouldRemove)
    }
}

extension FIFO: Sendable where Element: Sendable {}
