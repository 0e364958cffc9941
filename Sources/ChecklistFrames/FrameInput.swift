/// A connection's receive buffer: bytes read but not yet parsed, at
/// `storage[start..<end]`. Grows to hold one whole frame (at most the frame
/// limit, checked by `FrameParser` before more is asked for) and shrinks
/// back when it empties, so it stays bounded. Owned by one `FrameStream`.
struct FrameInput: ~Copyable {
    static let defaultCapacity = 64 << 10
    /// Keep at least this much room for a `read`.
    static let minimumRead = 4096

    private let capacity: Int
    private var storage: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0

    init(capacity: Int = FrameInput.defaultCapacity) {
        self.capacity = max(capacity, Self.minimumRead)
        storage = .allocate(byteCount: self.capacity, alignment: 16)
    }

    deinit { storage.deallocate() }

    /// The unparsed bytes. Valid until the next mutating call.
    var readable: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: storage[start..<end])
    }

    var count: Int { end - start }

    mutating func consume(_ count: Int) {
        start += count
        if start == end {
            start = 0
            end = 0
            if storage.count > 16 * capacity {
                storage.deallocate()
                storage = .allocate(byteCount: capacity, alignment: 16)
            }
        }
    }

    /// Free space after the unparsed bytes, large enough for the rest of the
    /// frame in progress (whose length prefix the parser already accepted).
    mutating func prepareForRead() -> UnsafeMutableRawBufferPointer {
        let pending = end - start
        var wanted = Self.minimumRead
        if pending >= 4 {
            let length = Int(readable.u32BE(at: 0))
            wanted = max(wanted, 4 + length - pending)
        }
        if storage.count - end < wanted && start > 0 {
            // Move the unparsed bytes to the front.
            if pending > 0 {
                storage.baseAddress!.copyMemory(from: storage.baseAddress! + start, byteCount: pending)
            }
            start = 0
            end = pending
        }
        if storage.count - end < wanted {
            let grownCapacity = (pending + wanted + capacity - 1) / capacity * capacity
            let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: grownCapacity, alignment: 16)
            if pending > 0 { grown.baseAddress!.copyMemory(from: storage.baseAddress! + start, byteCount: pending) }
            storage.deallocate()
            storage = grown
            start = 0
            end = pending
        }
        return UnsafeMutableRawBufferPointer(rebasing: storage[end...])
    }

    mutating func didRead(_ count: Int) {
        end += count
    }
}
