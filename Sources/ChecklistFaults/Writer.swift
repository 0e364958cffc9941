import ChecklistModel
import ChecklistRandom
import ChecklistWire

/// A writer: keyed patches to the shared lists, one at a time, each sent
/// until it gets a definite answer, through another node after a lost
/// answer, a timeout or `UNAVAILABLE`; one acknowledged patch in ten is
/// sent once more through another node (a client that lost the answer as
/// it came). Records every attempt; asserts nothing.
struct Writer {
    let index: Int
    let workload: Workload
    var random: SplitMix64
    /// The key's client id (distinct per writer).
    var clientID: UInt64 { UInt64(index + 1) }
    private var sequence: UInt64 = 0
    /// Item ids this writer inserted and saw acknowledged, per list (minus those it deleted).
    private var items: [ListID: [ItemID]] = [:]
    /// The highest revision it learnt of each list.
    private var revisions: [ListID: Revision] = [:]
    private var connection: NodeClient?

    init(index: Int, workload: Workload, seed: UInt64) {
        self.index = index
        self.workload = workload
        random = Seeds.generator(seed, stream: UInt64(index))
    }

    /// Runs until the deadline or the bound on patches.
    mutating func run() {
        var sent = 0
        while !workload.isOver && sent < workload.maxPatchesPerWriter {
            sent += 1
            sequence += 1
            let key = IdempotencyKey(client: clientID, sequence: sequence)
            let list = workload.lists[Int(random.next() % UInt64(workload.lists.count))]
            let (ops, base) = plan(key: key, list: list)
            send(PatchCall(key: key, list: list, baseRevision: base, ops: ops))
        }
        connection?.close()
    }

    /// Chooses the next patch: inserts, a batch, toggles (some with
    /// `baseRevision`), edits, deletes, moves.
    private mutating func plan(key: IdempotencyKey, list: ListID) -> ([PatchOperation], Revision?) {
        let known = items[list] ?? []
        let roll = random.next() % 100
        func pick(_ r: inout SplitMix64) -> ItemRef { .id(known[Int(r.next() % UInt64(known.count))]) }
        if known.isEmpty || roll < 30 {
            return ([.insert(tempRef: 1, position: position(), fields: ItemFields(text: ItemText.insert(key, 0)))], nil)
        }
        switch roll {
        case 30..<45:
            // A batch: inserts with toggles and edits of known items.
            var ops: [PatchOperation] = []
            var temp: UInt64 = 0
            for n in 0..<Int(2 + random.next() % 3) {
                switch random.next() % 3 {
                case 0:
                    temp += 1
                    ops.append(.insert(tempRef: temp, position: position(), fields: ItemFields(text: ItemText.insert(key, n))))
                case 1: ops.append(.toggle(pick(&random)))
                default: ops.append(.setText(pick(&random), ItemText.edit(key, n)))
                }
            }
            return (ops, nil)
        case 45..<65: return ([.toggle(pick(&random))], nil)
        case 65..<75: return ([.toggle(pick(&random))], revisions[list] ?? 1)
        case 75..<85: return ([.setText(pick(&random), ItemText.edit(key, 0))], nil)
        case 85..<93:
            let victim = pick(&random)
            if case .id(let id) = victim { items[list]?.removeAll { $0 == id } }
            return ([.delete(victim)], nil)
        default: return ([.move(pick(&random), toIndex: random.next() % 8)], nil)
        }
    }

    private mutating func position() -> InsertPosition {
        random.next() % 4 == 0 ? .index(random.next() % 4) : .end
    }

    /// Sends one patch until a definite answer or the attempts run out.
    private mutating func send(_ patch: PatchCall) {
        var node = Int(random.next() % UInt64(workload.nodeCount))
        var call = patch
        for attempt in 0..<workload.attempts {
            if attempt > 0 {
                // Two times in three through another node.
                if workload.nodeCount > 1 && random.next() % 3 != 0 {
                    node = (node + 1 + Int(random.next() % UInt64(workload.nodeCount - 1))) % workload.nodeCount
                }
                if ContinuousClock.now > workload.deadline + .seconds(20) { return }
                // A client's backoff: 25 ms doubling, with jitter (a pace, not a wait for readiness).
                let backoff = UInt64(25 << min(attempt - 1, 5))
                Nemesis.wait(until: .now + .milliseconds(Int(backoff / 2 + random.next() % backoff)))
            }
            call.attempt = attempt
            guard let client = connect(node) else { continue }
            let id = workload.recorder.invoke(client: index, node: node, .patch(call))
            let outcome: Outcome
            do {
                outcome = Outcome(try client.request(.patch(Patch(list: call.list, baseRevision: call.baseRevision,
                                                                    idempotencyKey: call.key, ops: call.ops)),
                                                     timeout: workload.answerTimeout))
            } catch {
                guard case .noAnswer(let why) = error else { return }
                outcome = .indeterminate(why)
                drop()
            }
            workload.recorder.complete(id, outcome)
            learn(call, outcome)
            if !outcome.isUnknown {
                // One acknowledged patch in ten is sent again at once through
                // another node, as by a client whose connection broke as the
                // answer came: it must get the same answer.
                if case .patchOK = outcome, workload.nodeCount > 1, random.next() % 10 == 0 {
                    call.attempt = attempt + 1
                    echo(call, node: (node + 1 + Int(random.next() % UInt64(workload.nodeCount - 1))) % workload.nodeCount)
                }
                return
            }
        }
    }

    /// Sends an answered patch once more with its key, to `node`; records the answer.
    private mutating func echo(_ call: PatchCall, node: Int) {
        guard let client = connect(node) else { return }
        let id = workload.recorder.invoke(client: index, node: node, .patch(call))
        do {
            let answer = try client.request(.patch(Patch(list: call.list, baseRevision: call.baseRevision, idempotencyKey: call.key, ops: call.ops)),
                                            timeout: workload.answerTimeout)
            workload.recorder.complete(id, Outcome(answer))
        } catch {
            guard case .noAnswer(let why) = error else { return }
            workload.recorder.complete(id, .indeterminate(why))
            drop()
        }
    }

    /// What an answer tells this writer about ids and revisions.
    private mutating func learn(_ call: PatchCall, _ outcome: Outcome) {
        switch outcome {
        case .patchOK(let revision, let ids):
            revisions[call.list] = max(revisions[call.list] ?? 0, revision)
            items[call.list, default: []].append(contentsOf: ids.map(\.id))
            if items[call.list]!.count > 400 { items[call.list]!.removeFirst(100) }
        case .failed(_, let revision?, _):
            revisions[call.list] = max(revisions[call.list] ?? 0, revision)
        default: break
        }
    }

    /// The connection to `node`, made anew when it is to another node;
    /// nil when the node cannot be reached now.
    private mutating func connect(_ node: Int) -> NodeClient? {
        if let connection, connection.node == node { return connection }
        drop()
        connection = NodeClient(node: node, port: workload.port(node), name: "faults-writer-\(index)")
        return connection
    }

    private mutating func drop() {
        connection?.close()
        connection = nil
    }
}
