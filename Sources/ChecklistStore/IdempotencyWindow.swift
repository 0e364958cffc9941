import ChecklistModel

/// The store's memory of answered idempotency keys (Protocol/SPEC.md
/// section 9): for each client (namespace and client id), the answers to its
/// most recent patches, so that a retry is answered instead of applied again.
///
/// Lives in `StoreState`, under the store's lock, so that "is this key
/// answered?" and "apply and remember" are one atomic step; it is fed by
/// every committed change that carries a key, live or replayed from the log,
/// so recovery rebuilds it.
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
    /// inserts get consecutive fresh ids, so this is almost always a range.
    enum InsertedIDs: Hashable, Sendable {
        case range(first: UInt64, count: Int)
        case list([ItemID])

        init(_ applied: [AppliedOperation]) {
            var ids: [ItemID] = []
            for case .insert(let id, _, _) in applied { ids.append(id) }
            if zip(ids, ids.dropFirst()).allSatisfy({ $0.rawValue &+ 1 == $1.rawValue }) {
                self = .range(first: ids.first?.rawValue ?? 0, count: ids.count)
            } else {
                self = .list(ids)
            }
        }

        var count: Int {
            switch self {
            case .range(_, let count): return count
            case .list(let ids): return ids.count
            }
        }

        subscript(i: Int) -> ItemID {
            switch self {
            case .range(let first, _): return ItemID(first + UInt64(i))
            case .list(let ids): return ids[i]
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
        let client = ClientKey(namespace: change.namespace, client: key.client)
        clock &+= 1
        var state = clients.removeValue(forKey: client) ?? ClientState()
        state.lastUsed = clock
        if state.answers.updateValue(Answer(list: change.list, revision: change.revision, inserted: InsertedIDs(applied)),
                                     forKey: key.sequence) == nil {
            state.order.append(key.sequence)
            order.append((client, key.sequence))
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


// MARK: Snapshots

/// What the store remembers of answered idempotency keys, as plain values:
/// for a snapshot, so that a restart from it (the log before it is gone)
/// still answers retries instead of applying them again.
public struct IdempotencyMemory: Hashable, Sendable {
    /// One answered patch.
    public struct Answer: Hashable, Sendable {
        public var namespace: Namespace
        public var key: IdempotencyKey
        public var list: ListID
        public var revision: Revision
        /// The ids the patch's inserts got, in operation order.
        public var insertedIDs: [ItemID]

        public init(namespace: Namespace, key: IdempotencyKey, list: ListID, revision: Revision, insertedIDs: [ItemID]) {
            self.namespace = namespace
            self.key = key
            self.list = list
            self.revision = revision
            self.insertedIDs = insertedIDs
        }
    }

    /// A client's highest forgotten sequence number (0: none).
    public struct Floor: Hashable, Sendable {
        public var namespace: Namespace
        public var client: UInt64
        public var sequence: UInt64

        public init(namespace: Namespace, client: UInt64, sequence: UInt64) {
            self.namespace = namespace
            self.client = client
            self.sequence = sequence
        }
    }

    /// Oldest first: restoring them in this order rebuilds the same bounds.
    public var answers: [Answer]
    public var floors: [Floor]

    public init(answers: [Answer] = [], floors: [Floor] = []) {
        self.answers = answers
        self.floors = floors
    }
}

extension IdempotencyWindow {
    /// The window as plain values, oldest answer first.
    var memory: IdempotencyMemory {
        var memory = IdempotencyMemory()
        var listed = order
        while let (client, sequence) = listed.popFirst() {
            guard let answer = clients[client]?.answers[sequence] else { continue }
            let ids = (0..<answer.inserted.count).map { answer.inserted[$0] }
            memory.answers.append(IdempotencyMemory.Answer(namespace: client.namespace,
                                                           key: IdempotencyKey(client: client.client, sequence: sequence),
                                                           list: answer.list, revision: answer.revision, insertedIDs: ids))
        }
        for (client, state) in clients where state.floor > 0 {
            memory.floors.append(IdempotencyMemory.Floor(namespace: client.namespace, client: client.client, sequence: state.floor))
        }
        memory.floors.sort { ($0.namespace.rawValue, $0.client) < ($1.namespace.rawValue, $1.client) }
        return memory
    }

    /// Adds `memory` (a snapshot's) to the window: floors first, then the
    /// answers in order, each like a change that carried its key.
    mutating func restore(_ memory: IdempotencyMemory) {
        for floor in memory.floors {
            let key = ClientKey(namespace: floor.namespace, client: floor.client)
            var state = clients[key] ?? ClientState()
            state.floor = max(state.floor, floor.sequence)
            clients[key] = state
        }
        for answer in memory.answers {
            let inserts = answer.insertedIDs.enumerated().map { i, id in
                AppliedOperation.insert(id: id, index: UInt64(i), fields: ItemFields(text: ""))
            }
            record(Change(namespace: answer.namespace, list: answer.list, revision: answer.revision,
                          kind: .patched(inserts), idempotencyKey: answer.key))
        }
    }
}
