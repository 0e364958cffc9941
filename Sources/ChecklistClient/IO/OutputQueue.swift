/// A connection's frames waiting for the I/O thread to write them, bounded
/// by bytes: a writer appends and never waits; a slow or stalled peer fills
/// only its own connection's queue, and the writer then gets
/// `ClientError.sendQueueFull`. Kept in the connection's `state` lock; no
/// I/O happens under it.
///
/// The bound counts every byte accepted and not yet moved into the I/O
/// thread's write buffer (`ConnectionIO`: at most 64 KiB, or one larger
/// frame) or handed to TLS, including frames the thread took out of the
/// queue. A frame larger than the bound is accepted when nothing else
/// waits, so that any frame under the server's limit can be sent.
struct OutputQueue: Sendable {
    /// The bound of a connection's queue unless configured: four 1 MiB
    /// frames, far beyond what an answered request loop keeps in flight.
    static let defaultLimit = 4 << 20

    let limit: Int
    /// Frames appended and not yet taken by the I/O thread.
    private(set) var frames: [[UInt8]] = []
    /// Bytes accepted and not yet written (queued or taken).
    private(set) var unwrittenBytes = 0
    /// True from an append that asked the I/O thread to flush until it took
    /// the frames: further appends need not ask again.
    private(set) var flushRequested = false

    init(limit: Int = OutputQueue.defaultLimit) {
        self.limit = limit
    }

    /// The error for bytes that do not fit now: `.sendQueueFull` when the
    /// queue holds bytes and `count` more would take it past `limit`; nil
    /// when they may be appended. (Asked before a request is registered, in
    /// the same lock hold as the `append` that follows.)
    func refusal(forBytes count: Int) -> ClientError? {
        guard unwrittenBytes > 0 && unwrittenBytes + count > limit else { return nil }
        return ClientError(.sendQueueFull, "the connection's send queue is full (\(unwrittenBytes) bytes not yet written, "
                           + "limit \(limit)): the server takes bytes slower than they are sent; the request was not sent")
    }

    /// Queues `frame` (which `refusal` allowed). Returns true when the I/O
    /// thread must be asked to flush (the first frame since it last took them).
    mutating func append(_ frame: [UInt8]) -> Bool {
        frames.append(frame)
        unwrittenBytes += frame.count
        defer { flushRequested = true }
        return !flushRequested
    }

    /// The I/O thread takes every queued frame (into `taken`, which must be
    /// empty: arrays are swapped, not copied); they still count against the
    /// bound until `wrote` says so.
    mutating func take(into taken: inout [[UInt8]]) {
        precondition(taken.isEmpty, "OutputQueue.take: the previous frames were not all written")
        swap(&frames, &taken)
        flushRequested = false
    }

    /// The I/O thread wrote `count` bytes of taken frames.
    mutating func wrote(_ count: Int) {
        unwrittenBytes -= count
        assert(unwrittenBytes >= 0, "OutputQueue: more bytes written than queued")
    }
}
