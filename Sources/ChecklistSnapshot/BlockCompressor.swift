import ChecklistThreads
import Glibc

/// Compresses a snapshot's uncompressed blocks into gzip, in order.
///
/// With one thread it is a single gzip member deflated on the caller's
/// thread (zlib, streaming). With more, each block becomes an independent
/// gzip member compressed whole (`GzipMemberCompressor`) by a pool of
/// worker threads; members are emitted in block order on the caller's
/// thread, so the output is one valid multi-member gzip file (RFC 1952
/// section 2.2). At most `threads + 1` blocks are in flight, so memory
/// stays bounded.
final class BlockCompressor {
    private let output: (UnsafeRawBufferPointer) throws(SnapshotError) -> Void
    private let single: GzipDeflater?
    private let pool: CompressionPool?
    private var emitted: UInt64 = 0

    init(level: Int32, threads: Int, blockBytes: Int,
         output: @escaping (UnsafeRawBufferPointer) throws(SnapshotError) -> Void) throws(SnapshotError) {
        self.output = output
        if threads <= 1 {
            single = try GzipDeflater(level: level)
            pool = nil
        } else {
            // Fail early if the level is invalid.
            _ = try GzipMemberCompressor(level: level)
            single = nil
            pool = CompressionPool(level: level, threads: threads)
        }
    }

    /// Compressed bytes handed to the output so far.
    var compressedBytes: UInt64 { emitted }

    /// Compresses `block`; `last` ends the stream.
    func compress(_ block: [UInt8], last: Bool) throws(SnapshotError) {
        if let single {
            let result = block.withUnsafeBytes { raw in
                Result { () throws(SnapshotError) in
                    try single.compress(raw, finish: last) { (chunk) throws(SnapshotError) in
                        try output(chunk)
                        emitted += UInt64(chunk.count)
                    }
                }
            }
            try result.get()
            return
        }
        guard let pool else { return }
        // Emit finished members while waiting for room for this block.
        while true {
            let (accepted, ready) = try pool.submit(block)
            try emit(ready)
            if accepted { break }
        }
        if last { try emit(pool.drain()) }
    }

    private func emit(_ members: [[UInt8]]) throws(SnapshotError) {
        for member in members {
            let result = member.withUnsafeBytes { raw in Result { () throws(SnapshotError) in try output(raw) } }
            try result.get()
            emitted += UInt64(member.count)
        }
    }
}

/// Worker threads compressing blocks into independent gzip members.
final class CompressionPool: Sendable {
    struct State {
        var jobs: [(sequence: Int, block: [UInt8])] = []
        var results: [Int: [UInt8]] = [:]
        var submitted = 0
        var nextToEmit = 0
        var failure: SnapshotError?
        var closing = false
    }

    private let lock: ConditionLock<State>
    private let threads: [NativeThread]
    private let maxInFlight: Int

    init(level: Int32, threads count: Int) {
        let lock = ConditionLock(State())
        self.lock = lock
        maxInFlight = count + 1
        threads = (0..<count).map { n in NativeThread.spawn(name: "checklist-gzip-\(n)") { CompressionPool.work(lock: lock, level: level) } }
    }

    deinit {
        lock.withLock { $0.closing = true }
        lock.broadcast(.work)
        for thread in threads { thread.join() }
    }

    /// Queues `block` if fewer than `maxInFlight` blocks are waiting to be
    /// emitted, and returns the members that are ready, in order. Waits
    /// until there is room or a member to emit; the caller emits the members
    /// and, if the block was not accepted, calls again.
    func submit(_ block: [UInt8]) throws(SnapshotError) -> (accepted: Bool, ready: [[UInt8]]) {
        let result = try lock.withLock(waitingOn: .progress, until: { s in
            s.submitted - s.nextToEmit < maxInFlight || s.results[s.nextToEmit] != nil || s.failure != nil
        }) { (s, _) throws(SnapshotError) -> (Bool, [[UInt8]]) in
            if let failure = s.failure { throw failure }
            let ready = Self.takeReady(&s)
            guard s.submitted - s.nextToEmit < maxInFlight else { return (false, ready) }
            s.jobs.append((s.submitted, block))
            s.submitted += 1
            return (true, ready)
        }
        if result.0 { lock.signal(.work) }
        return result
    }

    private static func takeReady(_ s: inout State) -> [[UInt8]] {
        var ready: [[UInt8]] = []
        while let member = s.results.removeValue(forKey: s.nextToEmit) {
            ready.append(member)
            s.nextToEmit += 1
        }
        return ready
    }

    /// Waits until every submitted block is compressed and returns the
    /// members not yet emitted, in order.
    func drain() throws(SnapshotError) -> [[UInt8]] {
        try lock.withLock(waitingOn: .progress, until: { s in
            s.nextToEmit + s.results.count == s.submitted || s.failure != nil
        }) { (s, _) throws(SnapshotError) in
            if let failure = s.failure { throw failure }
            return Self.takeReady(&s)
        }
    }

    private static func work(lock: ConditionLock<State>, level: Int32) {
        let compressor: GzipMemberCompressor
        do { compressor = try GzipMemberCompressor(level: level) } catch {
            lock.withLock { $0.failure = error }
            lock.broadcast(.progress)
            return
        }
        var member: [UInt8] = []
        while true {
            let job: (sequence: Int, block: [UInt8])? = lock.withLock(waitingOn: .work, until: { s in
                !s.jobs.isEmpty || s.closing
            }) { s, _ in s.jobs.isEmpty ? nil : s.jobs.removeFirst() }
            guard let job else { return }
            let result = job.block.withUnsafeBytes { raw in
                Result { () throws(SnapshotError) in try compressor.compress(raw, into: &member) }
            }
            lock.withLock { s in
                switch result {
                case .success: s.results[job.sequence] = member
                case .failure(let e): s.failure = e
                }
            }
            lock.broadcast(.progress)
        }
    }
}
