import ChecklistModel
import ChecklistRandom
import ChecklistWire

/// The reader: pages (GET_PAGE) and feed reads (CHANGES_SINCE) of the
/// shared lists through random nodes. Records each answer whole for the
/// checker (a PAGE must be the list as committed at the revision it names;
/// CHANGES must be the feed); asserts nothing.
struct Reader {
    let client: Int
    let workload: Workload
    var random: SplitMix64
    private var connection: NodeClient?
    /// What it learnt of each list: its revision and row count.
    private var revisions: [ListID: Revision] = [:]
    private var totals: [ListID: UInt64] = [:]

    init(client: Int, workload: Workload, seed: UInt64) {
        self.client = client
        self.workload = workload
        random = Seeds.generator(seed, stream: Seeds.reader)
    }

    mutating func run() {
        var reads = 0
        while !workload.isOver && reads < workload.maxReads {
            reads += 1
            let node = Int(random.next() % UInt64(workload.nodeCount))
            let list = workload.lists[Int(random.next() % UInt64(workload.lists.count))]
            let call: Call
            if random.next() % 3 == 0 {
                let known = revisions[list] ?? 0
                let since = known == 0 ? 0 : random.next() % (known + 1)
                call = .changes(list: list, since: since, limit: 1 + random.next() % 200)
            } else {
                let total = totals[list] ?? 0
                let offset = total == 0 || random.next() % 2 == 0 ? 0 : random.next() % total
                call = .page(list: list, offset: offset, limit: 1 + random.next() % 30)
            }
            read(call, node: node)
        }
        connection?.close()
    }

    private mutating func read(_ call: Call, node: Int) {
        if connection?.node != node {
            connection?.close()
            connection = NodeClient(node: node, port: workload.port(node), name: "faults-reader")
        }
        guard let connection else { return }
        let request: Request
        switch call {
        case .page(let list, let offset, let limit): request = .getPage(GetPage(list: list, start: .offset(offset), limit: limit))
        case .changes(let list, let since, let limit): request = .changesSince(ChangesSince(list: list, revision: since, limit: limit))
        case .patch: return
        }
        let id = workload.recorder.invoke(client: client, node: node, call)
        let outcome: Outcome
        do {
            outcome = Outcome(try connection.request(request, timeout: workload.answerTimeout))
        } catch {
            guard case .noAnswer(let why) = error else { return }
            outcome = .indeterminate(why)
            connection.close()
            self.connection = nil
        }
        workload.recorder.complete(id, outcome)
        switch outcome {
        case .page(let page):
            revisions[page.header.list] = max(revisions[page.header.list] ?? 0, page.header.revision)
            totals[page.header.list] = page.header.total
        case .changes(let changes):
            revisions[changes.list] = max(revisions[changes.list] ?? 0, changes.revision)
        default: break
        }
    }
}
