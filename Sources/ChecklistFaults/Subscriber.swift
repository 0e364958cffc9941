import ChecklistModel
import ChecklistRandom
import ChecklistWire

/// A subscriber that moves between nodes: it subscribes to every shared
/// list on one node, from the last revision it was given of each, takes
/// the pushes for a few seconds (or until the connection breaks), then
/// does the same on another node. A `FETCH` status is caught up with
/// CHANGES_SINCE on the same connection. Records every change it is given,
/// every subscription's start and every CHANGES_SINCE (as client 200 +
/// its number); asserts nothing.
struct Subscriber {
    let index: Int
    let workload: Workload
    var random: SplitMix64
    private var last: [ListID: Revision] = [:]
    private var session = 0

    init(index: Int, workload: Workload, seed: UInt64) {
        self.index = index
        self.workload = workload
        random = Seeds.generator(seed, stream: Seeds.subscribers + UInt64(index))
    }

    mutating func run() {
        var node = Int(random.next() % UInt64(workload.nodeCount))
        var sessions = 0
        while !workload.isOver && sessions < 10_000 {
            sessions += 1
            node = (node + 1 + Int(random.next() % UInt64(max(1, workload.nodeCount - 1)))) % workload.nodeCount
            let length = Duration.milliseconds(Int(1500 + random.next() % 4500))
            guard let client = NodeClient(node: node, port: workload.port(node), name: "faults-subscriber-\(index)") else { continue }
            session += 1
            follow(client, until: min(ContinuousClock.now + length, workload.deadline))
            client.close()
        }
    }

    /// One session on one connection.
    private mutating func follow(_ client: NodeClient, until end: ContinuousClock.Instant) {
        let entries = workload.lists.map { Subscribe.Entry(list: $0, revision: last[$0]) }
        guard case .subscribed(let answer)? = try? client.request(.subscribe(Subscribe(entries: entries)), timeout: workload.answerTimeout)
        else { return }
        let at = workload.recorder.now
        for entry in answer.entries {
            workload.recorder.subscribed(SubscriptionStart(subscriber: index, session: session, node: client.node, at: at,
                                                           list: entry.list, asked: last[entry.list], reported: entry.revision,
                                                           status: entry.status.rawValue))
            switch entry.status {
            case .fetch:
                // Catch up from the feed before the live pushes of this list.
                guard fetch(entry.list, to: entry.revision, on: client) else { return }
            case .resync:
                last[entry.list] = entry.revision
            case .live where last[entry.list] == nil:
                last[entry.list] = entry.revision
            default: break
            }
        }
        for push in client.takePushes() { guard take(push, from: client.node) else { return } }
        while ContinuousClock.now < end {
            let next: ServerMessage?
            do { next = try client.nextPush(timeout: .milliseconds(500)) } catch { return }
            guard let push = next else { continue }
            guard take(push, from: client.node) else { return }
        }
    }

    /// Reads the changes of `list` after the last one it has up to `target`.
    private mutating func fetch(_ list: ListID, to target: Revision, on client: NodeClient) -> Bool {
        var rounds = 0
        while (last[list] ?? 0) < target && rounds < 100 {
            rounds += 1
            // Recorded like the reader's: its CHANGES are checked against the feed too.
            let since = last[list] ?? 0
            let id = workload.recorder.invoke(client: Int(Seeds.subscribers) + index, node: client.node,
                                              .changes(list: list, since: since, limit: 1000))
            let outcome: Outcome
            do {
                outcome = Outcome(try client.request(.changesSince(ChangesSince(list: list, revision: since, limit: 1000)),
                                                     timeout: workload.answerTimeout))
            } catch {
                guard case .noAnswer(let why) = error else { return false }
                outcome = .indeterminate(why)
            }
            workload.recorder.complete(id, outcome)
            guard case .changes(let changes) = outcome, !changes.changes.isEmpty else { return false }
            for change in changes.changes where change.revision <= target { record(change, from: client.node) }
        }
        return true
    }

    /// Takes one push; false when the subscription ended.
    private mutating func take(_ push: ServerMessage, from node: Int) -> Bool {
        switch push {
        case .changePush(let push):
            record(push.change, from: node)
            return true
        case .subscriptionDropped: return false
        default: return true
        }
    }

    private mutating func record(_ change: ListChange, from node: Int) {
        workload.recorder.deliver(Delivery(subscriber: index, session: session, node: node, at: workload.recorder.now, change: change))
        last[change.list] = change.revision
    }
}
