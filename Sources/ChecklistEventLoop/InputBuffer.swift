#if canImport(Glibc)
import Glibc
#endif
import ChecklistSocket

/// A connection's receive buffer: one allocation, reused across reads.
///
/// Layout: `[consumed | readable | free]`. Reads append at `writerIndex`;
/// the handler consumes from `readerIndex`. When everything is consumed both
/// indices go back to 0 (no copy); when the consumed prefix is large or the
/// free tail too small, the readable bytes are moved to the front. The buffer
/// grows by doubling (up to the caller's limit) and is released when idle.
struct InputBuffer: ~Copyable {
    private var storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    private(set) var readerIndex = 0
    private(set) var writerIndex = 0
    /// The last read filled all free space: the next one gets a larger buffer.
    private var lastReadFilled = false

    static let initialCapacity = 4096
    /// Reads that keep filling the buffer grow it up to this size.
    static let streamingCapacity = 64 << 10

    deinit { storage.deallocate() }

    var capacity: Int { storage.count }
    var readableCount: Int { writerIndex - readerIndex }

    /// The unconsumed bytes. Valid until the next mutating call; the
    /// connection never mutates or frees the buffer while a handler holds this.
    var readable: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(storage)[readerIndex..<writerIndex])
    }

    /// Makes free space at the end and reads once from `fd` into it.
    /// `limit` bounds the capacity (it is exceeded only to hold one chunk past it).
    /// Returns nil, without reading, when the buffer is full and at its limit.
    mutating func read(from fd: Int32, limit: Int) throws(SocketError) -> SocketReadResult? {
        var result = SocketReadResult.wouldBlock
        let room = try append(limit: limit) { free throws(SocketError) in
            result = try readSocket(fd, into: free)
            if case .bytes(let n) = result { return n }
            return 0
        }
        return room ? result : nil
    }

    /// Makes free space at the end and lets `body` write into it once;
    /// `body` returns how many bytes it wrote. Returns false, without
    /// calling `body`, when the buffer is full and at `limit`. (TLS
    /// decrypts into the buffer through this.)
    mutating func append<E: Error>(limit: Int, _ body: (UnsafeMutableRawBufferPointer) throws(E) -> Int) throws(E) -> Bool {
        reserveFreeSpace(limit: limit)
        guard writerIndex < capacity else { return false }
        let free = UnsafeMutableRawBufferPointer(rebasing: storage[writerIndex...])
        let n = try body(free)
        precondition(n >= 0 && n <= free.count, "appended \(n) bytes into \(free.count) free")
        writerIndex += n
        lastReadFilled = n == free.count
        return true
    }

    /// Lets `body` rewrite the last `count` readable bytes in place and
    /// keeps the first of them it returns the number of (WebSocket frames
    /// are unmasked into their payload this way).
    mutating func rewriteTail(_ count: Int, _ body: (UnsafeMutableRawBufferPointer) -> Int) {
        precondition(count >= 0 && count <= readableCount, "rewriting \(count) of \(readableCount) bytes")
        let kept = body(UnsafeMutableRawBufferPointer(rebasing: storage[(writerIndex - count)..<writerIndex]))
        precondition(kept >= 0 && kept <= count, "kept \(kept) of \(count) bytes")
        writerIndex -= count - kept
        if readerIndex == writerIndex {
            readerIndex = 0
            writerIndex = 0
        }
    }

    /// Marks `count` readable bytes consumed.
    mutating func consume(_ count: Int) {
        precondition(count >= 0 && count <= readableCount, "consumed \(count) of \(readableCount) bytes")
        readerIndex += count
        if readerIndex == writerIndex {
            readerIndex = 0
            writerIndex = 0
        }
    }

    /// Drops all readable bytes, keeping the allocation.
    mutating func clear() {
        readerIndex = 0
        writerIndex = 0
    }

    /// Frees the allocation if nothing is buffered (and it is bigger than
    /// `keeping`); a later read allocates again.
    mutating func releaseIfEmpty(keeping: Int = 0) {
        guard readableCount == 0, capacity > keeping else { return }
        storage.deallocate()
        storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
        clear()
        lastReadFilled = false
    }

    private mutating func reserveFreeSpace(limit: Int) {
        if readableCount == 0 { clear() }
        if capacity == 0 {
            storage = .allocate(byteCount: Self.initialCapacity, alignment: 16)
            return
        }
        let free = capacity - writerIndex
        // Compact when the consumed prefix is large or little room is left.
        if readerIndex > 0 && (readerIndex >= capacity / 2 || free < capacity / 4) {
            let base = storage.baseAddress!
            memmove(base, base + readerIndex, readableCount)
            writerIndex = readableCount
            readerIndex = 0
        }
        let freeNow = capacity - writerIndex
        let wantsStreaming = lastReadFilled && capacity < Self.streamingCapacity
        if freeNow == 0 || wantsStreaming {
            // Grow by doubling, but never far past what the limit allows to be
            // buffered: one initial chunk beyond it is enough to notice.
            let ceiling = max(limit + Self.initialCapacity, Self.initialCapacity)
            let grown = min(capacity * 2, ceiling)
            guard grown > capacity else { return }
            let bigger = UnsafeMutableRawBufferPointer.allocate(byteCount: grown, alignment: 16)
            bigger.baseAddress!.copyMemory(from: storage.baseAddress! + readerIndex, byteCount: readableCount)
            writerIndex = readableCount
            readerIndex = 0
            storage.deallocate()
            storage = bigger
            lastReadFilled = false
        }
    }
}
