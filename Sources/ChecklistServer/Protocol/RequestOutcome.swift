import ChecklistStorage
import ChecklistModel
import ChecklistWire

/// What handling one request came to, for its connection: where the answer
/// is, what it is, and what must happen around it. The connection acts on
/// this and never looks into the answer's bytes.
struct RequestOutcome {
    /// Where the answer's frames lie in the session's output (empty while
    /// a transfer worker makes it).
    var answer: Range<Int>
    /// The answer's message type; nil while a transfer worker makes it.
    var kind: MessageType?
    /// The answer's code when it is an ERROR.
    var errorCode: ChecklistError.Code?
    /// The answer's request id; nil while a transfer worker makes it.
    var requestID: UInt32?
    /// The list and revision the answer reports when it is a PATCH_OK.
    var patched: PatchedRevision?
    /// The answer must be the connection's last: the connection sends it,
    /// then closes (refused authentication, revoked token, lost framing).
    var closesConnection = false
    /// What only some requests come to (`Waiting`), out of line: the
    /// common outcome (an answer, nothing to wait for) is a few plain
    /// words and one nil reference, copied and dropped without a call per
    /// field. Set together (`setWaiting`), read one by one.
    private var waiting: Waiting?

    /// The heavy part of a snapshot request, for a transfer worker; its
    /// answer comes from `ProtocolSession.completeSnapshotWork`, and the
    /// requests after it wait for that.
    var transferWork: SnapshotWork? { waiting?.transferWork }
    /// The request needs database reads first (lists whose rows are not
    /// in memory, a revision another node committed, stored changes, a
    /// retried key): nothing was answered; the connection has the reads
    /// made (`ListCache.prepare`), reading nothing meanwhile, and hands the
    /// decoded request back to `ProtocolSession.resume`.
    var parked: ParkedRequest? { waiting?.parked }
    /// A PATCH_OK answered from the idempotency memory: the patch's key.
    var retried: RetriedPatch? { waiting?.retried }
    /// A PAGE that shows changes not committed yet: it waits for them.
    var uncommittedRead: UncommittedRead? { waiting?.uncommittedRead }

    /// An outcome that waits for nothing and hands nothing off (`setWaiting` adds that).
    init(answer: Range<Int>, kind: MessageType?, errorCode: ChecklistError.Code?, requestID: UInt32?,
         patched: PatchedRevision?, closesConnection: Bool) {
        self.answer = answer
        self.kind = kind
        self.errorCode = errorCode
        self.requestID = requestID
        self.patched = patched
        self.closesConnection = closesConnection
    }

    /// Sets what the request waits for or hands off (nil for each that it does not).
    mutating func setWaiting(transferWork: SnapshotWork?, parked: ParkedRequest?, retried: RetriedPatch?,
                             uncommittedRead: UncommittedRead?) {
        if transferWork == nil && parked == nil && retried == nil && uncommittedRead == nil {
            waiting = nil
        } else {
            waiting = Waiting(transferWork: transferWork, parked: parked, retried: retried, uncommittedRead: uncommittedRead)
        }
    }

    /// The answer reports a commit: a PATCH_OK, for a patch applied now or
    /// remembered from an earlier attempt (the idempotency memory), whose
    /// change may not be durable yet even if this request logged nothing.
    var reportsCommit: Bool { kind == .patchOK }
}

/// The rare parts of a `RequestOutcome`, immutable (a new one is made to
/// change them): copies of an outcome share one safely.
private final class Waiting {
    let transferWork: SnapshotWork?
    let parked: ParkedRequest?
    let retried: RetriedPatch?
    let uncommittedRead: UncommittedRead?

    init(transferWork: SnapshotWork?, parked: ParkedRequest?, retried: RetriedPatch?, uncommittedRead: UncommittedRead?) {
        self.transferWork = transferWork
        self.parked = parked
        self.retried = retried
        self.uncommittedRead = uncommittedRead
    }
}
