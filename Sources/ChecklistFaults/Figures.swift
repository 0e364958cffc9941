import ChecklistModel

/// The figures of a run, computed from its history: what was sent, what
/// came back, what the nemesis did.
public struct Figures: Sendable {
    /// Distinct keyed patches sent (each with its retries).
    public var patches = 0
    /// Sendings, first ones and retries.
    public var attempts = 0
    /// Patches with a PATCH_OK.
    public var acknowledged = 0
    /// Patches with a definite error (CONFLICT, NOT_FOUND, ...) and no PATCH_OK.
    public var errors = 0
    /// Patches with neither: every answer lost or `UNAVAILABLE`.
    public var indeterminate = 0
    /// Attempts answered `UNAVAILABLE` (or `SHUTTING_DOWN`, `OVERLOADED`).
    public var unavailableAnswers = 0
    /// Attempts with no answer (connection lost, timeout).
    public var lostAnswers = 0
    public var pages = 0
    public var changesReads = 0
    public var deliveries = 0
    public var subscriptions = 0
    public var faults: [FaultKind: Int] = [:]
    /// The longest time a writer went without an acknowledgement (ns), which writer, and from when.
    public var longestWithoutAck: (nanoseconds: UInt64, client: Int, from: UInt64) = (0, 0, 0)
    /// The longest any answer took (ns).
    public var longestAnswer: UInt64 = 0

    public init(_ history: History) {
        let patches = KeyedPatch.group(history.operations)
        self.patches = patches.count
        acknowledged = patches.filter { $0.ack != nil }.count
        errors = patches.filter { $0.ack == nil && $0.failed }.count
        indeterminate = self.patches - acknowledged - errors
        var acksByClient: [Int: [UInt64]] = [:]
        var firstByClient: [Int: UInt64] = [:]
        var lastByClient: [Int: UInt64] = [:]
        for op in history.operations {
            if let done = op.completedAt { longestAnswer = max(longestAnswer, done - op.invokedAt) }
            switch op.call {
            case .patch:
                attempts += 1
                firstByClient[op.client] = min(firstByClient[op.client] ?? .max, op.invokedAt)
                lastByClient[op.client] = max(lastByClient[op.client] ?? 0, op.completedAt ?? history.endedAt)
                switch op.outcome {
                case .patchOK: acksByClient[op.client, default: []].append(op.completedAt ?? 0)
                case .indeterminate, .pending: lostAnswers += 1
                case .failed where op.outcome.isUnknown: unavailableAnswers += 1
                default: break
                }
            case .page: if case .page = op.outcome { pages += 1 }
            case .changes: if case .changes = op.outcome { changesReads += 1 }
            }
        }
        for (client, first) in firstByClient {
            // From its first sending to its last answer.
            let marks = [first] + (acksByClient[client] ?? []).sorted() + [lastByClient[client] ?? history.endedAt]
            for (a, b) in zip(marks, marks.dropFirst()) where b > a && b - a > longestWithoutAck.nanoseconds {
                longestWithoutAck = (b - a, client, a)
            }
        }
        deliveries = history.deliveries.count
        subscriptions = Set(history.subscriptions.map { "\($0.subscriber)/\($0.session)" }).count
        for fault in history.faults { faults[fault.kind, default: 0] += 1 }
    }
}
