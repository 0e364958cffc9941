import ChecklistModel
import ChecklistThreads
import ChecklistWire
import Synchronization

/// What a client asked for, as recorded in the history.
public enum Call: Sendable, Equatable {
    /// One attempt at a keyed PATCH; a retry is another attempt with the
    /// same key (and the same operations), often through another node.
    case patch(PatchCall)
    /// GET_PAGE from an offset (filter all).
    case page(list: ListID, offset: UInt64, limit: UInt64)
    /// CHANGES_SINCE a revision.
    case changes(list: ListID, since: Revision, limit: UInt64)
}

/// One attempt at a keyed patch.
public struct PatchCall: Sendable, Equatable {
    public var key: IdempotencyKey
    public var list: ListID
    public var baseRevision: Revision?
    public var ops: [PatchOperation]
    /// 0 for the first sending of the key, then 1, 2, ...
    public var attempt: Int

    public init(key: IdempotencyKey, list: ListID, baseRevision: Revision? = nil, ops: [PatchOperation], attempt: Int = 0) {
        self.key = key
        self.list = list
        self.baseRevision = baseRevision
        self.ops = ops
        self.attempt = attempt
    }
}

/// What came back.
public enum Outcome: Sendable, Equatable {
    /// Invoked, no completion recorded (the run ended first).
    case pending
    case patchOK(revision: Revision, ids: [TempRefAssignment])
    case page(PageMessage)
    case changes(Changes)
    /// An ERROR answer: a definite failure, or `UNAVAILABLE` (outcome unknown).
    case failed(code: UInt16, revision: Revision?, message: String)
    /// No answer: the connection closed or broke, or the answer did not come in time.
    case indeterminate(String)

    /// An ERROR with one of the codes that leave the outcome open
    /// (`UNAVAILABLE`, `SHUTTING_DOWN`, `OVERLOADED`).
    public var isUnknown: Bool {
        switch self {
        case .pending, .indeterminate: return true
        case .failed(let code, _, _): return Outcome.unknownCodes.contains(code)
        default: return false
        }
    }

    /// Error codes after which a patch may or may not have been applied.
    public static let unknownCodes: Set<UInt16> = [
        ChecklistError.Code.unavailable.rawValue, ChecklistError.Code.shuttingDown.rawValue,
        ChecklistError.Code.overloaded.rawValue,
    ]
}

/// One operation of one client: invoked at a time, completed (or not) later.
public struct Operation: Sendable, Equatable {
    /// Its index in the history.
    public var id: Int
    /// The client (writer, reader) that made it.
    public var client: Int
    /// The node it was sent to.
    public var node: Int
    /// Nanoseconds since the run started (monotonic clock).
    public var invokedAt: UInt64
    public var completedAt: UInt64?
    public var call: Call
    public var outcome: Outcome

    public init(id: Int, client: Int, node: Int, invokedAt: UInt64, completedAt: UInt64? = nil, call: Call,
                outcome: Outcome = .pending) {
        self.id = id
        self.client = client
        self.node = node
        self.invokedAt = invokedAt
        self.completedAt = completedAt
        self.call = call
        self.outcome = outcome
    }
}

extension Operation {
    /// Which sending of its key a patch attempt was (0 for other calls).
    public var attempt: Int {
        if case .patch(let call) = call { return call.attempt }
        return 0
    }
}

/// A change a subscriber was given (a CHANGE push, or a CHANGES answer read
/// to catch up after a `FETCH` status), in the order it was given.
public struct Delivery: Sendable, Equatable {
    public var subscriber: Int
    /// Which of the subscriber's connections (it moves between nodes).
    public var session: Int
    public var node: Int
    public var at: UInt64
    public var change: ListChange

    public init(subscriber: Int, session: Int, node: Int, at: UInt64, change: ListChange) {
        self.subscriber = subscriber
        self.session = session
        self.node = node
        self.at = at
        self.change = change
    }
}

/// A subscription's start: the revision a SUBSCRIBED entry reported, and
/// the revision the subscriber asked from (nil: from now).
public struct SubscriptionStart: Sendable, Equatable {
    public var subscriber: Int
    public var session: Int
    public var node: Int
    public var at: UInt64
    public var list: ListID
    public var asked: Revision?
    public var reported: Revision
    public var status: UInt8

    public init(subscriber: Int, session: Int, node: Int, at: UInt64, list: ListID, asked: Revision?, reported: Revision, status: UInt8) {
        self.subscriber = subscriber
        self.session = session
        self.node = node
        self.at = at
        self.list = list
        self.asked = asked
        self.reported = reported
        self.status = status
    }
}

/// One fault the nemesis caused, from its start to its heal.
public struct FaultRecord: Sendable, Equatable {
    public var kind: FaultKind
    /// The node hit (nil for PostgreSQL's restart).
    public var node: Int?
    public var startedAt: UInt64
    public var healedAt: UInt64?
    /// What went wrong carrying it out, if anything (the harness's own trouble).
    public var note: String?

    public init(kind: FaultKind, node: Int?, startedAt: UInt64, healedAt: UInt64? = nil, note: String? = nil) {
        self.kind = kind
        self.node = node
        self.startedAt = startedAt
        self.healedAt = healedAt
        self.note = note
    }
}

/// Everything the clients and the nemesis saw, recorded as it happened and
/// never judged on the way: the checker reads it afterwards.
public struct History: Sendable, Equatable {
    public var operations: [Operation] = []
    public var deliveries: [Delivery] = []
    public var subscriptions: [SubscriptionStart] = []
    public var faults: [FaultRecord] = []
    /// When the workload stopped (nanoseconds since the start).
    public var endedAt: UInt64 = 0

    public init(operations: [Operation] = [], deliveries: [Delivery] = [], subscriptions: [SubscriptionStart] = [],
                faults: [FaultRecord] = [], endedAt: UInt64 = 0) {
        self.operations = operations
        self.deliveries = deliveries
        self.subscriptions = subscriptions
        self.faults = faults
        self.endedAt = endedAt
    }
}

/// The shared recorder of a run: every thread appends under one lock. Times
/// are nanoseconds of the monotonic clock since `start`.
public final class Recorder: Sendable {
    private let history = Mutex(History())
    private let start: UInt64

    public init() { start = monotonicNanoseconds() }

    /// Nanoseconds since the recorder was made.
    public var now: UInt64 { monotonicNanoseconds() - start }

    /// Records an invocation; returns its id for `complete`.
    public func invoke(client: Int, node: Int, _ call: Call) -> Int {
        let at = now
        return history.withLock { history in
            let id = history.operations.count
            history.operations.append(Operation(id: id, client: client, node: node, invokedAt: at, call: call))
            return id
        }
    }

    public func complete(_ id: Int, _ outcome: Outcome) {
        let at = now
        history.withLock { history in
            history.operations[id].completedAt = at
            history.operations[id].outcome = outcome
        }
    }

    public func deliver(_ delivery: Delivery) {
        history.withLock { $0.deliveries.append(delivery) }
    }

    public func subscribed(_ start: SubscriptionStart) {
        history.withLock { $0.subscriptions.append(start) }
    }

    /// Records a fault's start; returns its index for `healed`.
    public func faultStarted(_ kind: FaultKind, node: Int?) -> Int {
        let at = now
        return history.withLock { history in
            history.faults.append(FaultRecord(kind: kind, node: node, startedAt: at))
            return history.faults.count - 1
        }
    }

    public func faultHealed(_ index: Int, note: String? = nil) {
        let at = now
        history.withLock { history in
            history.faults[index].healedAt = at
            if let note { history.faults[index].note = note }
        }
    }

    /// Marks the end of the workload.
    public func end() { let at = now; history.withLock { $0.endedAt = at } }

    /// A copy of everything recorded so far.
    public var snapshot: History { history.withLock { $0 } }
}
