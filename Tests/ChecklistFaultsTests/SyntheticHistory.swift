import ChecklistFaults
import ChecklistModel
import ChecklistWire

/// A small, clean run to break on purpose: list 1 created at revision 1;
/// writer 1 inserts "w1.1.0" (item 1, revision 2); writer 2 toggles it
/// (revision 3); a reader pages it at revision 3 and reads its changes
/// since 1; a subscriber is given revisions 2 and 3. Two nodes end with
/// the same rows and feed. Each test changes one thing and expects the
/// checker to name it.
struct SyntheticHistory {
    static let list = ListID(1)
    static let item = ItemID(1)
    static let insertKey = IdempotencyKey(client: 1, sequence: 1)
    static let toggleKey = IdempotencyKey(client: 2, sequence: 1)

    var operations: [Operation] = []
    var deliveries: [Delivery] = []
    var subscriptions: [SubscriptionStart] = []
    var faults: [FaultRecord] = []
    var feed: [ListChange]
    var rows: [Item]
    /// Node 1's copy, when it should differ.
    var otherFeed: [ListChange]?
    var otherRows: [Item]?
    var finalRevision: Revision = 3
    var readError: String?

    static func ms(_ n: UInt64) -> UInt64 { n * 1_000_000 }

    static let created = ListChange(list: list, revision: 1, kind: .listCreated(name: "L", icon: "Inbox"))
    static let inserted = ListChange(list: list, revision: 2, kind: .patched([.insert(id: item, index: 0, fields: ItemFields(text: "w1.1.0"))]))
    static let toggled = ListChange(list: list, revision: 3, kind: .patched([.setChecked(item, true)]))

    init() {
        feed = [Self.created, Self.inserted, Self.toggled]
        rows = [Item(id: Self.item, fields: ItemFields(text: "w1.1.0", checked: true))]
        patch(client: 0, key: Self.insertKey, [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "w1.1.0"))],
              at: 10, done: 20, .patchOK(revision: 2, ids: [TempRefAssignment(tempRef: 1, id: Self.item)]))
        patch(client: 1, key: Self.toggleKey, [.toggle(.id(Self.item))], at: 30, done: 40, .patchOK(revision: 3, ids: []))
        page(revision: 3, rows: rows, at: 50)
        operations.append(Operation(id: operations.count, client: 9, node: 1, invokedAt: Self.ms(60), completedAt: Self.ms(61),
                                    call: .changes(list: Self.list, since: 1, limit: 10),
                                    outcome: .changes(Changes(list: Self.list, revision: 3, changes: [Self.inserted, Self.toggled]))))
        subscriptions.append(SubscriptionStart(subscriber: 0, session: 1, node: 0, at: Self.ms(5), list: Self.list, asked: nil,
                                               reported: 1, status: Subscribed.Status.live.rawValue))
        deliver(Self.inserted, at: 21)
        deliver(Self.toggled, at: 41)
    }

    mutating func patch(client: Int, key: IdempotencyKey, _ ops: [PatchOperation], base: Revision? = nil, attempt: Int = 0,
                        node: Int = 0, at: UInt64, done: UInt64, _ outcome: Outcome) {
        operations.append(Operation(id: operations.count, client: client, node: node, invokedAt: Self.ms(at), completedAt: Self.ms(done),
                                    call: .patch(PatchCall(key: key, list: Self.list, baseRevision: base, ops: ops, attempt: attempt)),
                                    outcome: outcome))
    }

    mutating func page(revision: Revision, rows: [Item], at: UInt64) {
        operations.append(Operation(id: operations.count, client: 9, node: 0, invokedAt: Self.ms(at), completedAt: Self.ms(at + 1),
                                    call: .page(list: Self.list, offset: 0, limit: 10),
                                    outcome: .page(PageMessage(list: Self.list, revision: revision, total: UInt64(rows.count), offset: 0, rows: rows))))
    }

    mutating func deliver(_ change: ListChange, at: UInt64) {
        deliveries.append(Delivery(subscriber: 0, session: 1, node: 0, at: Self.ms(at), change: change))
    }

    /// Runs the checker (answers bounded by 10 s).
    func check() -> [Violation] {
        let history = History(operations: operations, deliveries: deliveries, subscriptions: subscriptions, faults: faults,
                              endedAt: Self.ms(100_000))
        let reads = [
            NodeRead(node: 0, list: Self.list, rows: rows, revision: finalRevision, feed: feed),
            NodeRead(node: 1, list: Self.list, rows: readError == nil ? (otherRows ?? rows) : nil, revision: finalRevision,
                     feed: readError == nil ? (otherFeed ?? feed) : nil, error: readError),
        ]
        return Checker(history: history, reads: reads, answerBound: .seconds(10)).check()
    }

    /// The kinds found.
    func kinds() -> Set<Violation.Kind> { Set(check().map(\.kind)) }
}
