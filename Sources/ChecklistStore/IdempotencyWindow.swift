import ChecklistModel

/// The store's memory of answered idempotency keys (Protocol/SPEC.md
/// section 9): for each client (namespace and client id), the answers to its
/// most recent patches, so that a retry is answered instead of applied again.
///
/// Lives in `StoreState`, under the store's lock, so that "is this key
/// answered?" and "apply and remember" are one atomic step; it is fed by
/// every committed change that carries a key, live or replayed from the log,
/// and by the IDEMPOTENCY records of the snapshot recovery starts from
/// (`restore(_:)`), so recovery rebuilds it.
///
/// Bounded three ways (`Limits`): the newest `perClient` answers of each
/// client, `maxEntries` answers in all (oldest first out), and `maxClients`
/// clients (the least recently used go). Each client keeps a `floor`: the
/// highest sequence number it has forgotten. A retry of a sequence number at
/// or below the floor that is not remembered cannot be told apart from one
/// that was applied, so it is refused (`RESYNC_REQUIRED`), never re-applied.
/// Only forgetting a whole client loses its floor.
struct IdempotencyWindow: Sendable {
    struct Limits: Hashable, Sendable {
        var perClient: Int = 1024
        var maxEntries: Int = 1 << 18
        var maxClients: Int = 1 << 16

        static let standard = Limits()
    }

    struct ClientKey: Hashable, Sendable {
        var namespace: Namespace
        var client: UInt64
    }

    /// The item ids a patch's inserts got, in operation order. A batch's
    /// inserts get consecutive fresh ids, so this is almost always one range,
    /// held in O(1) however many items the patch inserted.
    enum InsertedIDs: Hashable, Sendable {
        case range(first: UInt64, count: Int)
        /// More than one run (ids that do not all go up by one).
        case runs([ItemIDRun])

        init(_ applied: [AppliedOperation]) {
            var ids: [ItemID] = []
            for case .insert(let id, _, _) in applied { ids.append(id) }
            self.init(runs: ItemIDRun.runs(of: ids))
        }

        init(runs: [ItemIDRun]) {
            if runs.count > 1 {
                self = .runs(runs)
            } else {
                self = .range(first: runs.first?.first.rawValue ?? 0, count: Int(clamping: runs.first?.count ?? 0))
            }
        }

        var count: Int {
            switch self {
            case .range(_, let count): return count
            case .runs(let runs):
                var total = 0
                for run in runs {
                    let (sum, overflow) = total.addingReportingOverflow(Int(clamping: run.count))
                    total = overflow ? Int.max : sum
                }
                return total
            }
        }

        /// The `i`-th id, for `i` below `count`.
        subscript(i: Int) -> ItemID {
            switch self {
            case .range(let first, _): return ItemID(first &+ UInt64(i))
            case .runs(let runs):
                var rest = UInt64(i)
                for run in runs {
                    if rest < run.count { return ItemID(run.first.rawValue &+ rest) }
                    rest -= run.count
                }
                preconditionFailure("inserted id \(i) of \(count)")
            }
        }

        /// The ids as runs, in order (none for a patch without inserts).
        var runs: [ItemIDRun] {
            switch self {
            case .range(let first, let count): return count == 0 ? [] : [ItemIDRun(first: ItemID(first), count: UInt64(count))]
            case .runs(let runs): return runs
            }
        }
    }

    /// What a committed patch answered.
    struct Answer: Hashable, Sendable {
        var list: ListID
        var revision: Revision
        var inserted: InsertedIDs
    }

    enum Lookup: Hashable {
        /// Never answered (as far as the window knows): apply it.
        case new
        /// Answered before: answer this again.
        case answered(Answer)
        /// At or below the client's floor and not remembered.
        case forgotten
    }

    struct ClientState: Sendable {
        var answers: [UInt64: Answer] = [:]
        /// Sequence numbers in the order they were recorded.
        var order = FIFO<UInt64>()
        var floor: UInt64 = 0
        var lastUsed: UInt64 = 0
    }

    let limits: Limits
    private(set) var clients: [ClientKey: ClientState] = [:]
    /// Every recorded answer in record order, for the global bound; entries
    /// of forgotten clients are skipped when they come up.
    private(set) var order = FIFO<(ClientKey, UInt64)>()
    private(set) var entryCount = 0
    private var clock: UInt64 = 0

    init(limits: Limits = .standard) {
        self.limits = limits
    }

    var clientCount: Int { clients.count }

    /// Whether the window knows `client` at all (tests).
    func remembers(_ client: ClientKey) -> Bool { clients[client] != nil }

    func lookup(_ key: IdempotencyKey, in ns: Namespace) -> Lookup {
        guard let state = clients[ClientKey(namespace: ns, client: key.client)] else { return .new }
        if let answer = state.answers[key.sequence] { return .answered(answer) }
        return key.sequence <= state.floor ? .forgotten : .new
    }

    /// Remembers the answer of a committed change that carries a key.
    mutating func record(_ change: Change) {
        guard let key = change.idempotencyKey, case .patched(let applied) = change.kind else { return }
        record(Answer(list: change.list, revision: change.revision, inserted: InsertedIDs(applied)),
               of: ClientKey(namespace: change.namespace, client: key.client), sequence: key.sequence)
    }

    /// Remembers `answer` as the client's answer to `sequence`, as its most
    /// recent, and applies the bounds.
    mutating func record(_ answer: Answer, of client: ClientKey, sequence: UInt64) {
        clock &+= 1
        var state = clients.removeValue(forKey: client) ?? ClientState()
        state.lastUsed = clock
        if state.answers.updateValue(answer, forKey: sequence) == nil {
            state.order.append(sequence)
            order.append((client, sequence))
            entryCount += 1
        }
        while state.order.count > limits.perClient, let oldest = state.order.popFirst() {
            forget(oldest, of: &state)
        }
        clients[client] = state
        while entryCount > limits.maxEntries, let (owner, sequence) = order.popFirst() {
            guard var other = clients.removeValue(forKey: owner) else { continue }
            // Both queues are in record order: if the answer is still there, it is this client's oldest.
            if other.answers[sequence] != nil, other.order.first == sequence {
                _ = other.order.popFirst()
                forget(sequence, of: &other)
            }
            clients[owner] = other
        }
        if clients.count > limits.maxClients { forgetLeastRecentlyUsedClients() }
        if order.count > 2 * entryCount + 1024 { order.removeAll { clients[$0.0]?.answers[$0.1] == nil } }
    }

    /// Raises `client`'s floor to at least `floor` and makes it the most
    /// recently used client (restoring a snapshot), keeping what it has.
    mutating func restoreClient(_ client: ClientKey, floor: UInt64) {
        clock &+= 1
        var state = clients.removeValue(forKey: client) ?? ClientState()
        state.lastUsed = clock
        state.floor = max(state.floor, floor)
        clients[client] = state
        if clients.count > limits.maxClients { forgetLeastRecentlyUsedClients() }
    }

    /// Forgets the answer of `key` without raising the floor: its commit
    /// was lost, so a retry must be applied again.
    mutating func withdraw(_ key: IdempotencyKey, in ns: Namespace) {
        let client = ClientKey(namespace: ns, client: key.client)
        guard var state = clients[client], state.answers.removeValue(forKey: key.sequence) != nil else { return }
        entryCount -= 1
        state.order.removeAll(where: { $0 == key.sequence })
        clients[client] = state
    }

    private mutating func forget(_ sequence: UInt64, of state: inout ClientState) {
        if state.answers.removeValue(forKey: sequence) != nil { entryCount -= 1 }
        state.floor = max(state.floor, sequence)
    }

    /// Drops the least recently used quarter of the clients (amortized: this
    /// runs once per `maxClients / 4` new clients).
    private mutating func forgetLeastRecentlyUsedClients() {
        let victims = clients.sorted { $0.value.lastUsed < $1.value.lastUsed }.prefix(max(1, clients.count / 4))
        for (client, state) in victims {
            entryCount -= state.answers.count
            clients[client] = nil
        }
    }
}
