import ChecklistCommandLine
import ChecklistClient
import ChecklistLatency
import ChecklistModel
import ChecklistWire
import Foundation

/// `checklist-bench fanout`: W writers commit small patches as fast as
/// their answers come back while S subscribers receive every change as a
/// push. Reports how long a change takes from the writer to each subscriber
/// (p50/p99/p99.9) and how many pushes per second reach the subscribers.
///
/// Latency is measured to the moment a subscriber's task has the decoded
/// push, from two starts:
/// - `push...`: from just before the writer sends its PATCH (the send time
///   travels in the item text; writers and subscribers share this
///   process's clock). The commit happens in between, so this bounds
///   commit→subscriber from above, and holds the writer's wait for its
///   commit (the batch and its WAL flush; `patchRtt...` is that round trip).
/// - `commitPush...`, on PostgreSQL with `track_commit_timestamp = on`:
///   from the commit itself, the timestamp PostgreSQL records for the
///   change's transaction (`CommitTimes`, read after the run; same machine,
///   same system clock). The stamp is taken as the commit record is
///   written, before its WAL flush, so the flush is in the figure.
/// The writer's own PATCH_OK is no reference: on a small machine its task
/// waits behind the subscribers' for a core, and pushes often arrive first.
enum FanoutScenario {
    /// The scenario's options, for the parser and `--help`.
    static let spec = CommandSpec(
        name: "fanout", summary: "W writers, S subscribers of every change; push latency, pushes/s",
        options: [
            .value("--subscribers", "N", "subscribers (default 100)"),
            .value("--writers", "N", "writers (default 4)"),
            .value("--lists", "N", "lists (default 1)"),
            .value("--seconds", "S", "how long it runs (default 10)"),
            BenchOptions.server, BenchOptions.postgres,
            .value("--nodes", "N", "with --postgres: N nodes on that one database; writes go\n"
                   + "through the first, subscriptions to the last (default 1)"),
            BenchOptions.json,
        ] + BenchOptions.tls)

    static func run(_ args: BenchArguments) async throws {
        let subscriberCount = try args.int("subscribers", default: 100, min: 1)
        let writerCount = try args.int("writers", default: 4, min: 1)
        let listCount = try args.int("lists", default: 1, min: 1)
        let seconds = try args.double("seconds", default: 10)

        // Every change of the run stays stored, so its commit time can be read after it.
        let target = try BenchTarget(args, extraServerArguments: ["--max-push-buffer", "\(64 << 20)", "--retain-changes", "\(1 << 24)"])
        defer { target.stop() }
        let lists = try await makeLists(count: listCount, on: target)
        // With --nodes: the writers on the first node, the subscribers on the last.
        try await target.waitForLists(lists, onEveryNode: true)
        let subscribers = try await subscribe(count: subscriberCount, to: lists, on: target, node: target.nodeCount - 1)
        // With --nodes: one more subscriber on the writers' node, the reference for the cross-node part.
        let origin = target.nodeCount > 1 ? try await subscribe(count: 1, to: lists, on: target, node: 0) : []
        var writers: [ChecklistConnection] = []
        for _ in 0..<writerCount { writers.append(try await target.connect(name: "fanout-writer")) }

        let started = ContinuousClock.now
        var cpu = ToolCPU()
        let deadline = started.advanced(by: .milliseconds(Int(seconds * 1000)))
        let listCountForReceivers = lists.count
        var receivers: [Task<Outcome, Never>] = []
        for (_, pushes) in subscribers {
            receivers.append(Task { await receive(pushes, lists: listCountForReceivers) })
        }
        let originReceivers = origin.map { _, pushes in Task { await receive(pushes, lists: listCountForReceivers) } }
        var outcome = try await write(until: deadline, lists: lists, writers: writers)
        // One last change per list: after it (revision order), a subscriber has everything.
        for list in lists { try await writers[0].patch(list, ops: [.setText(.id(ItemID(1)), "end")]) }
        outcome.merge(await collect(receivers, closingAfter: .seconds(30), subscribers.map(\.0)))
        let atOrigin = await collect(originReceivers, closingAfter: .seconds(30), origin.map(\.0))
        cpu.stop()
        for writer in writers { await writer.close() }
        for (connection, _) in subscribers + origin { await connection.close() }

        let elapsed = started.duration(to: outcome.lastPush ?? .now)
        let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var report = BenchReport()
        report.add("scenario", "fanout")
        report.add("transport", target.transport)
        report.add("subscribers", subscriberCount)
        report.add("nodes", target.nodeCount)
        report.add("writers", writerCount)
        report.add("lists", listCount)
        report.add("seconds", elapsedSeconds)
        report.add("commits", outcome.commits)
        report.add("commitsPerSecond", Double(outcome.commits) / elapsedSeconds)
        report.add("pushes", Int(outcome.latency.count))
        report.add("pushesPerSecond", Double(outcome.latency.count) / elapsedSeconds)
        report.add("expectedPushes", outcome.commits * subscriberCount)
        report.add("subscribersIncomplete", subscriberCount - outcome.subscribersDone)
        report.addLatencies(outcome.latency, prefix: "push")
        report.add("pushMaxMs", outcome.latency.maxMs)
        do throws(CommitTimes.Unavailable) {
            guard let conninfo = args.string("postgres") else { throw CommitTimes.Unavailable(description: "needs --postgres") }
            let commits = try CommitTimes.read(conninfo: conninfo, lists: lists)
            let fromCommit = outcome.fromCommit(commits)
            report.add("commitTimes", "postgres")
            report.addLatencies(fromCommit.latency, prefix: "commitPush")
            report.add("commitPushMaxMs", fromCommit.latency.maxMs)
            report.add("commitPushUnmatched", fromCommit.unmatched)
            if !origin.isEmpty {
                let originFromCommit = atOrigin.fromCommit(commits)
                report.addLatencies(originFromCommit.latency, prefix: "originCommitPush")
                report.add("originCommitPushMaxMs", originFromCommit.latency.maxMs)
            }
        } catch {
            report.add("commitTimes", "unavailable: \(error)")
        }
        if !origin.isEmpty {
            let crossing = outcome.after(atOrigin)
            report.addLatencies(crossing.latency, prefix: "crossNode")
            report.add("crossNodeMaxMs", crossing.latency.maxMs)
            report.add("crossNodeBeforeOrigin", crossing.earlier)
        }
        report.add("patchRttP50Ms", outcome.writerRTT.quantileMs(0.5))
        report.add("patchRttP99Ms", outcome.writerRTT.quantileMs(0.99))
        // Per commit sent or push received: what the tool handles.
        report.addToolCPU(cpu, requests: outcome.commits + Int(outcome.latency.count))
        if let rss = target.serverPeakRssBytes { report.add("serverPeakRssBytes", rss) }
        report.print(json: args.flag("json"))
    }

    /// `count` lists of one item each, the item whose text the writers set.
    private static func makeLists(count: Int, on target: BenchTarget) async throws -> [ListID] {
        let setup = try await target.connect()
        var lists: [ListID] = []
        for n in 0..<count {
            let list = try await setup.createList(name: "fanout-\(n)-\(UInt64.random(in: 0...UInt64.max))", icon: "Inbox")
            try await setup.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "t=0"))])
            lists.append(list.id)
        }
        await setup.close()
        return lists
    }

    /// The subscribers: one connection each, subscribed to every list.
    private static func subscribe(count: Int, to lists: [ListID], on target: BenchTarget,
                                  node: Int) async throws -> [(ChecklistConnection, AsyncStream<LivePush>)] {
        var subscribers: [(ChecklistConnection, AsyncStream<LivePush>)] = []
        for _ in 0..<count {
            let connection = try await target.connect(name: "fanout-subscriber", node: node)
            let pushes = connection.livePushes(bufferLimit: 1 << 20)
            _ = try await connection.subscribe(lists.map { Subscribe.Entry(list: $0) })
            subscribers.append((connection, pushes))
        }
        return subscribers
    }

    /// Each writer patches its list as fast as its answers come back until
    /// `deadline`, the send time in the item text; returns their round trips.
    private static func write(until deadline: ContinuousClock.Instant, lists: [ListID],
                              writers: [ChecklistConnection]) async throws -> Outcome {
        try await withThrowingTaskGroup(of: Outcome.self) { group in
            for (n, writer) in writers.enumerated() {
                let list = lists[n % lists.count]
                group.addTask {
                    var rtt = LatencyHistogram()
                    while ContinuousClock.now < deadline {
                        let sent = DispatchTime.now().uptimeNanoseconds
                        try await writer.patch(list, ops: [.setText(.id(ItemID(1)), "t=\(sent)")])
                        rtt.record(nanos: DispatchTime.now().uptimeNanoseconds - sent)
                    }
                    return Outcome(writerRTT: rtt, commits: Int(rtt.count))
                }
            }
            var total = Outcome()
            for try await one in group { total.merge(one) }
            return total
        }
    }

    /// Waits for every receiver. A subscriber that was dropped never sees
    /// the closing change: after `patience` its connection is closed, which
    /// ends its receiver.
    private static func collect(_ receivers: [Task<Outcome, Never>], closingAfter patience: Duration,
                                _ connections: [ChecklistConnection]) async -> Outcome {
        let stragglers = Task {
            try await Task.sleep(for: patience)
            for connection in connections { await connection.close() }
        }
        var outcome = Outcome()
        for receiver in receivers { outcome.merge(await receiver.value) }
        stragglers.cancel()
        return outcome
    }

    struct Outcome: Sendable {
        var latency = LatencyHistogram()
        var writerRTT = LatencyHistogram()
        var commits = 0
        var subscribersDone = 0
        var lastPush: ContinuousClock.Instant?
        /// Each push's list, revision and arrival (`CommitTimes.now`), for `fromCommit`.
        var received: [Received] = []

        struct Received: Sendable {
            var list: ListID
            var revision: Revision
            var nanos: UInt64
        }

        mutating func merge(_ other: Outcome) {
            latency.merge(other.latency)
            writerRTT.merge(other.writerRTT)
            commits += other.commits
            subscribersDone += other.subscribersDone
            received += other.received
            if let t = other.lastPush { lastPush = max(lastPush ?? t, t) }
        }

        /// The latency of every push from its change's commit, and how
        /// many pushes have no commit time (trimmed from the database).
        func fromCommit(_ commits: CommitTimes) -> (latency: LatencyHistogram, unmatched: Int) {
            var latency = LatencyHistogram()
            var unmatched = 0
            for push in received {
                guard let committed = commits.time(push.list, push.revision) else {
                    unmatched += 1
                    continue
                }
                latency.record(nanos: push.nanos > committed ? push.nanos - committed : 0)
            }
            return (latency, unmatched)
        }

        /// How much later than at `origin` each push arrived here, per
        /// (list, revision); a push here before origin's counts 0 (`earlier`).
        func after(_ origin: Outcome) -> (latency: LatencyHistogram, earlier: Int) {
            var arrivals: [ListID: [Revision: UInt64]] = [:]
            for push in origin.received { arrivals[push.list, default: [:]][push.revision] = push.nanos }
            var latency = LatencyHistogram()
            var earlier = 0
            for push in received {
                guard let there = arrivals[push.list]?[push.revision] else { continue }
                if push.nanos < there { earlier += 1 }
                latency.record(nanos: push.nanos > there ? push.nanos - there : 0)
            }
            return (latency, earlier)
        }
    }

    /// One subscriber: records the latency of every push until it has the
    /// closing change of every list.
    private static func receive(_ pushes: AsyncStream<LivePush>, lists: Int) async -> Outcome {
        var outcome = Outcome()
        var ended = 0
        for await push in pushes {
            guard case .change(let change) = push, case .patched(let ops) = change.kind else { continue }
            let now = DispatchTime.now().uptimeNanoseconds
            let arrived = CommitTimes.now()
            outcome.lastPush = .now
            guard case .setText(_, let text)? = ops.first else { continue }
            if text == "end" {
                ended += 1
                if ended == lists {
                    outcome.subscribersDone = 1
                    break
                }
            } else if let sent = UInt64(text.dropFirst(2)), sent <= now {
                outcome.latency.record(nanos: now - sent)
                outcome.received.append(Outcome.Received(list: change.list, revision: change.revision, nanos: arrived))
            }
        }
        return outcome
    }
}
