import ChecklistCommandLine
import ChecklistClient
import ChecklistLatency
import ChecklistModel
import ChecklistTesting
import Foundation
import Synchronization

/// `checklist-bench failover [--postgres CONNINFO]`: two `checklistd` nodes
/// of its own on one database (without `--postgres`, of a private cluster it
/// starts), C clients on each (a `ChecklistSync` given both
/// nodes, its own node first: keyed patches as fast as their answers come,
/// a subscription to its list, and a page read every 4th patch). After
/// `--seconds`, node 1 is killed with SIGKILL; the run goes on for `--after`
/// seconds. Then every list is read through the surviving node:
///
/// - `ackedLost`: acknowledged patches whose item is missing (must be 0);
///   `appliedTwice`: items present more than once (must be 0);
/// - `deadNodeGap*Ms`: for each client of the killed node, from the kill to
///   its first acknowledged patch after it (target: max < 2000 ms);
/// - `subscriptionsBroken`: subscriptions that skipped or repeated a
///   revision, or did not reach their list's last revision.
enum FailoverScenario {
    /// The scenario's options, for the parser and `--help`.
    static let spec = CommandSpec(
        name: "failover", summary: "two nodes on one database, node 1 killed: acknowledged patches lost, gap",
        options: [
            .value("--postgres", "CONNINFO", "the database of the two nodes (default: a private cluster)"),
            .value("--clients", "N", "clients on each node (default 4)"),
            .value("--seconds", "S", "run before node 1 is killed with SIGKILL (default 3)"),
            .value("--after", "S", "run on after the kill (default 3)"),
            BenchOptions.json,
        ])

    static func run(_ args: BenchArguments) async throws {
        let perNode = try args.int("clients", default: 4, min: 1)
        let before = try args.double("seconds", default: 3)
        let after = try args.double("after", default: 3)

        // Without --postgres: a private cluster of its own (initdb in a temporary directory).
        let cluster = args.string("postgres") == nil ? try PostgresCluster() : nil
        defer { cluster?.stop() }
        let conninfo = try args.string("postgres") ?? cluster!.createDatabase("checklist_failover")
        let executable = try ProductLocator.path(of: "checklistd")
        let arguments = ["--host", "127.0.0.1", "--port", "0", "--postgres", conninfo]
        let node1 = try ServerProcess.start(executable: executable, arguments: arguments)
        defer { node1.kill() }
        let node2 = try ServerProcess.start(executable: executable, arguments: arguments)
        defer { node2.stop() }
        let nodes = [ServerAddress(host: node1.host, port: node1.port), ServerAddress(host: node2.host, port: node2.port)]

        let setup = try await ChecklistConnection.connect(servers: [nodes[0]], clientName: "failover-setup")
        var lists: [ListSummary] = []
        for n in 0..<2 * perNode {
            lists.append(try await setup.createList(name: "failover-\(n)-\(UInt64.random(in: 0...UInt64.max))", icon: "Inbox"))
        }
        await setup.close()
        // Node 2 learns of the lists through the database: the load starts once it has them all.
        let visibleMs = try await waitUntilVisible(lists, on: nodes[1])

        let killAt = KillMoment()
        let start = ContinuousClock.now
        let end = start.advanced(by: .milliseconds(Int((before + after) * 1000)))
        var clients: [Task<ClientOutcome, Never>] = []
        for (n, list) in lists.enumerated() {
            let home = n % 2
            let order = home == 0 ? nodes : nodes.reversed()
            clients.append(Task { await FailoverClient(list: list, servers: order, onKilledNode: home == 0).run(until: end, killAt: killAt) })
        }
        try await Task.sleep(until: start.advanced(by: .milliseconds(Int(before * 1000))))
        killAt.mark()
        node1.kill()
        var outcomes: [ClientOutcome] = []
        for client in clients { outcomes.append(await client.value) }

        let reader = try await ChecklistConnection.connect(servers: [nodes[1]], clientName: "failover-check")
        var check = Check()
        for (list, outcome) in zip(lists, outcomes) {
            try await check.verify(list, outcome, on: reader)
        }
        await reader.close()
        var table = report(outcomes, check, perNode: perNode, before: before, after: after)
        table.add("listsOnNode2Ms", visibleMs)
        table.print(json: args.flag("json"))
        for example in outcomes.flatMap(\.examples) { FileHandle.standardError.write(Data("  e.g. \(example)\n".utf8)) }
    }

    /// Waits until `server` lists every one of `lists`; returns how long that took.
    private static func waitUntilVisible(_ lists: [ListSummary], on server: ServerAddress) async throws -> Double {
        let started = ContinuousClock.now
        let connection = try await ChecklistConnection.connect(servers: [server], clientName: "failover-setup")
        defer { Task { await connection.close() } }
        let wanted = Set(lists.map(\.id))
        while !wanted.isSubset(of: Set(try await connection.lists().map(\.id))) {
            guard started.duration(to: .now) < .seconds(30) else {
                throw BenchFailure(description: "node 2 did not see the lists made through node 1 within 30 s")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        let took = started.duration(to: .now)
        return Double(took.components.seconds) * 1000 + Double(took.components.attoseconds) / 1e15
    }

    /// Every list read back through the surviving node.
    struct Check {
        var lost = 0
        var twice = 0
        var revisionsOff = 0

        mutating func verify(_ list: ListSummary, _ outcome: ClientOutcome, on reader: ChecklistConnection) async throws {
            var texts: [String: Int] = [:]
            var page = try await reader.page(list.id, limit: 1000)
            for item in page.items { texts[item.text, default: 0] += 1 }
            while page.hasMore {
                page = try await reader.page(list.id, start: .offset(page.endOffset), limit: 1000)
                for item in page.items { texts[item.text, default: 0] += 1 }
            }
            lost += outcome.acked.filter { texts[$0] == nil }.count
            twice += texts.values.filter { $0 > 1 }.count
            // Each applied patch is one revision: created at 1, +1 per item.
            if page.revision != list.revision + UInt64(texts.count) { revisionsOff += 1 }
        }
    }

    private static func report(_ outcomes: [ClientOutcome], _ check: Check, perNode: Int,
                               before: Double, after: Double) -> BenchReport {
        var deadGaps = LatencyHistogram()
        var liveGaps = LatencyHistogram()
        var rtt = LatencyHistogram()
        var neverBack = 0
        for outcome in outcomes {
            rtt.merge(outcome.rtt)
            guard let gap = outcome.gapNanos else {
                if outcome.onKilledNode { neverBack += 1 }
                continue
            }
            if outcome.onKilledNode { deadGaps.record(nanos: gap) } else { liveGaps.record(nanos: gap) }
        }
        var report = BenchReport()
        report.add("scenario", "failover")
        report.add("nodes", 2)
        report.add("clientsPerNode", perNode)
        report.add("secondsBeforeKill", before)
        report.add("secondsAfterKill", after)
        report.add("patchesAcked", outcomes.reduce(0) { $0 + $1.acked.count })
        report.add("ackedLost", check.lost)
        report.add("appliedTwice", check.twice)
        report.add("revisionsOff", check.revisionsOff)
        report.add("patchesFailed", outcomes.reduce(0) { $0 + $1.failures })
        report.add("pageReads", outcomes.reduce(0) { $0 + $1.reads })
        report.add("subscriptionsBroken", outcomes.filter { !$0.subscriptionWhole }.count)
        report.add("failovers", outcomes.reduce(0) { $0 + $1.failovers })
        report.add("deadNodeClientsNeverBack", neverBack)
        report.add("deadNodeGapP50Ms", deadGaps.quantileMs(0.5))
        report.add("deadNodeGapMaxMs", deadGaps.maxMs)
        report.add("liveNodeGapMaxMs", liveGaps.maxMs)
        report.add("patchRttP50Ms", rtt.quantileMs(0.5))
        report.add("patchRttP99Ms", rtt.quantileMs(0.99))
        return report
    }
}
