import ChecklistStorage
import ChecklistWire

/// Answers of one connection that may not leave before their commits are
/// durable (`ServerStorage.answersWaitForDurability`: `--fsync always`,
/// PostgreSQL).
///
/// Answers keep request order: once one answer waits, everything after it
/// waits too, even answers that changed nothing. A barrier marks one answer
/// (its start and end) together with the storage position that must be
/// durable before that answer (and all bytes before it) may be sent, and
/// keeps beside the bytes what replacing the answer needs (its request id,
/// what a PATCH_OK reports): nothing is read back out of held bytes.
///
/// Pure bookkeeping, no I/O; owned by the connection's event-loop thread.
struct HeldAnswers {
    /// One answer that waits: its bytes `start..<end` and the position it waits for.
    struct Barrier {
        var start: Int
        var end: Int
        var lsn: UInt64
        /// The first position the request may have committed at (the
        /// answer's own commit lies in `from...lsn`).
        var from: UInt64 = 0
        /// A retry's PATCH_OK from the idempotency memory: the patch's key
        /// (its original's commit lies at or before `lsn`).
        var retried: RetriedPatch? = nil
        /// A PAGE that showed changes then in flight.
        var read: UncommittedRead? = nil
        /// The request this answers (counted again when the answer is replaced by an ERROR).
        var request: MessageType = .ping
        /// The answer's request id: its replacement goes under it.
        var requestID: UInt32 = FrameHeader.pushRequestID
        /// The list and revision the answer reports when it is a PATCH_OK
        /// (what a rebase of its commit is looked up by).
        var patched: PatchedRevision? = nil
    }

    private var bytes: [UInt8] = []
    /// In increasing order of bytes; never overlapping. Positions increase
    /// too, except a retry's, which waits for its original's commit.
    private var barriers: [Barrier] = []

    var isEmpty: Bool { bytes.isEmpty }

    /// Bytes held.
    var count: Int { bytes.count }

    /// The largest LSN a held answer waits for, if any (a retry's answer
    /// may wait for an older position than the answers before it).
    var waitingFor: UInt64? { barriers.lazy.map(\.lsn).max() }

    /// Adds `output`; `outputBarriers` lie in `output`'s offsets.
    mutating func append(_ output: UnsafeRawBufferPointer, barriers outputBarriers: [Barrier]) {
        let base = bytes.count
        bytes.append(contentsOf: output)
        for var b in outputBarriers {
            b.start += base
            b.end += base
            barriers.append(b)
        }
    }

    /// Removes and hands to `send` the leading bytes whose barriers are
    /// durable by `state`; the barrier of an answer whose commit failed is
    /// handed to `replace`, and what that returns is sent in the answer's place;
    /// that of a durable answer is handed to `rewrite`, and what that returns (if
    /// anything) is sent in its place. With no barrier left, everything goes.
    mutating func release(_ state: (UInt64) -> CommitState, replace: (Barrier) -> [UInt8],
                          rewrite: (Barrier) -> [UInt8]? = { _ in nil },
                          _ send: (UnsafeRawBufferPointer) -> Void) {
        var sent = 0
        var releasable = 0
        var passed = 0
        bytes.withUnsafeBytes { all in
            for b in barriers {
                switch state(b.lsn) {
                case .pending: break
                case .durable:
                    if let rewritten = rewrite(b) {
                        if b.start > sent { send(UnsafeRawBufferPointer(rebasing: all[sent..<b.start])) }
                        rewritten.withUnsafeBytes { send($0) }
                        sent = b.end
                    }
                    releasable = b.end
                    passed += 1
                    continue
                case .failed:
                    if b.start > sent { send(UnsafeRawBufferPointer(rebasing: all[sent..<b.start])) }
                    replace(b).withUnsafeBytes { send($0) }
                    sent = b.end
                    releasable = b.end
                    passed += 1
                    continue
                }
                break
            }
            if passed == barriers.count { releasable = all.count }
            if releasable > sent { send(UnsafeRawBufferPointer(rebasing: all[sent..<releasable])) }
        }
        barriers.removeFirst(passed)
        guard releasable > 0 else { return }
        bytes.removeFirst(releasable)
        for i in barriers.indices {
            barriers[i].start -= releasable
            barriers[i].end -= releasable
        }
    }
}
