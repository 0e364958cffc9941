import ChecklistStorage
import ChecklistWire

/// The bytes a connection holds back because some answer among them may
/// not leave before its commit is durable
/// (`ServerStorage.answersWaitForDurability`: `--fsync always`,
/// PostgreSQL), with a `HeldAnswer` marking each answer that waits.
///
/// Answers keep request order: once one answer waits, everything after it
/// waits too, even answers that changed nothing (and pushes queued behind
/// them). Each `HeldAnswer` marks one answer's bytes together with the
/// storage position that must be durable before that answer (and all bytes
/// before it) may be sent, and keeps beside the bytes what replacing the
/// answer needs: nothing is read back out of held bytes.
///
/// Pure bookkeeping, no I/O; owned by the connection's event-loop thread.
struct HeldAnswerBytes {
    private var bytes: [UInt8] = []
    /// In increasing order of bytes; never overlapping. Positions increase
    /// too, except a retry's, which waits for its original's commit.
    private var answers: [HeldAnswer] = []

    var isEmpty: Bool { bytes.isEmpty }

    /// Bytes held.
    var count: Int { bytes.count }

    /// The largest LSN a held answer waits for, if any (a retry's answer
    /// may wait for an older position than the answers before it).
    var waitingFor: UInt64? { answers.lazy.map(\.lsn).max() }

    /// Adds `output`, in which no answer waits (a push behind held answers).
    mutating func append(_ output: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: output)
    }

    /// Adds `output` and takes `waiting`, the answers in it that wait (at
    /// `output`'s offsets), leaving it empty.
    mutating func append(_ output: UnsafeRawBufferPointer, taking waiting: inout [HeldAnswer]) {
        let base = bytes.count
        bytes.append(contentsOf: output)
        if answers.isEmpty && base == 0 {
            // Nothing held before: the answers move over as they are.
            swap(&answers, &waiting)
        } else {
            for var b in waiting {
                b.start += base
                b.end += base
                answers.append(b)
            }
        }
        waiting.removeAll(keepingCapacity: true)
    }

    /// Removes and hands to `send` the leading bytes whose answers are
    /// durable by `state`; the barrier of an answer whose commit failed is
    /// handed to `replace`, and what that returns is sent in the answer's place;
    /// that of a durable answer is handed to `rewrite`, and what that returns (if
    /// anything) is sent in its place. With no barrier left, everything goes.
    mutating func release(_ state: (UInt64) -> CommitState, replace: (HeldAnswer) -> [UInt8],
                          rewrite: (HeldAnswer) -> [UInt8]? = { _ in nil },
                          _ send: (UnsafeRawBufferPointer) -> Void) {
        var sent = 0
        var releasable = 0
        var passed = 0
        bytes.withUnsafeBytes { all in
            for b in answers {
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
            if passed == answers.count { releasable = all.count }
            if releasable > sent { send(UnsafeRawBufferPointer(rebasing: all[sent..<releasable])) }
        }
        answers.removeFirst(passed)
        guard releasable > 0 else { return }
        bytes.removeFirst(releasable)
        for i in answers.indices {
            answers[i].start -= releasable
            answers[i].end -= releasable
        }
    }
}

/// One answer that waits for durability (`HeldAnswerBytes`): where its
/// bytes lie (`start..<end`), the position it waits for, and what replacing
/// it needs (its request id, what a PATCH_OK reports, a retry's key, a
/// read's uncommitted lists), noted as it was written.
struct HeldAnswer {
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
