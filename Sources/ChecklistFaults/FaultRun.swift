import ChecklistModel
import ChecklistThreads
import ChecklistWire

/// A whole fault test: the cluster, the workload and the nemesis for
/// `seconds`, the heal, the final reads, the checker. Everything random
/// comes from `seed`.
public struct FaultRun: Sendable {
    public struct Options: Sendable {
        public var seed: UInt64
        public var seconds: Int = 60
        public var nodes: Int = 3
        public var faults: Set<FaultKind> = FaultKind.all
        public var writers: Int = 6
        public var lists: Int = 4
        public var subscribers: Int = 2
        /// `--postgres-statement-timeout` of every node.
        public var statementTimeoutSeconds: Int = 5
        /// The checklistd to run (default: the one built next to this program).
        public var executable: String?

        public init(seed: UInt64) { self.seed = seed }
    }

    /// What a run found.
    public struct Result: Sendable {
        public var options: Options
        public var history: History
        public var reads: [NodeRead]
        /// Whether the nodes agreed on every list's revision after the heal.
        public var settled: Bool
        public var violations: [Violation]
        public var figures: Figures
        /// The tail of each node's log when something went wrong (kept for the report).
        public var nodeLogs: [String]
    }

    public var options: Options
    public init(_ options: Options) { self.options = options }

    /// Runs the test; `progress` gets a line at each stage.
    public func run(progress: @Sendable (String) -> Void = { _ in }) throws -> Result {
        let options = self.options
        progress("seed \(options.seed): starting PostgreSQL and \(options.nodes) nodes")
        let cluster = try FaultCluster(nodes: options.nodes, statementTimeoutSeconds: options.statementTimeoutSeconds,
                                       executable: options.executable)
        defer { cluster.stop() }
        let lists = try makeLists(cluster)
        let recorder = Recorder()
        let answerTimeout = Duration.seconds(options.statementTimeoutSeconds + 5)
        let workload = Workload(lists: lists, nodeCount: options.nodes, port: { cluster.port(of: $0) }, recorder: recorder,
                                deadline: .now + .seconds(options.seconds), answerTimeout: answerTimeout,
                                // The reader's pages stay in memory: at most about 100,000 of up to 30 rows.
                                maxReads: min(100_000, max(1000, 300 * options.seconds)))
        progress("running \(options.seconds) s: \(options.writers) writers, a reader, \(options.subscribers) subscribers on \(lists.count) lists; faults: \(options.faults.sorted().map(\.rawValue).joined(separator: ","))")
        var threads: [NativeThread] = []
        for index in 0..<options.writers {
            threads.append(try NativeThread.start(name: "faults-writer") {
                var writer = Writer(index: index, workload: workload, seed: options.seed)
                writer.run()
            })
        }
        threads.append(try NativeThread.start(name: "faults-reader") {
            var reader = Reader(client: options.writers, workload: workload, seed: options.seed)
            reader.run()
        })
        for index in 0..<options.subscribers {
            threads.append(try NativeThread.start(name: "faults-subscr") {
                var subscriber = Subscriber(index: index, workload: workload, seed: options.seed)
                subscriber.run()
            })
        }
        let nemesisThread = try NativeThread.start(name: "faults-nemesis") {
            var nemesis = Nemesis(cluster: cluster, kinds: options.faults, recorder: recorder, seed: options.seed)
            nemesis.run(until: workload.deadline)
        }
        for thread in threads { thread.join() }
        recorder.end()
        nemesisThread.join()
        progress("healed (connections open in the relays to PostgreSQL: \(cluster.relays.map { String($0.connectionsOpen) }.joined(separator: ", "))); reading every list from every node")
        let (reads, settled) = FinalReads.read(lists: lists, nodes: options.nodes, port: { cluster.port(of: $0) })
        let history = recorder.snapshot
        progress("checking \(history.operations.count) operations, \(history.deliveries.count) deliveries")
        let checker = Checker(history: history, reads: reads, answerBound: answerTimeout - .seconds(2))
        let violations = checker.check()
        let logs = violations.isEmpty && settled ? [] : (0..<options.nodes).map { cluster.log(of: $0) }
        return Result(options: options, history: history, reads: reads, settled: settled, violations: violations,
                      figures: Figures(history), nodeLogs: logs)
    }

    /// Creates the shared lists through node 0 (before any fault).
    private func makeLists(_ cluster: FaultCluster) throws -> [ListID] {
        guard let client = NodeClient(node: 0, port: cluster.port(of: 0), name: "faults-setup", connectTimeout: .seconds(10)) else {
            throw FaultRunError("cannot connect to node 0")
        }
        defer { client.close() }
        var lists: [ListID] = []
        for n in 0..<options.lists {
            let answer = try? client.request(.createList(CreateList(name: "Faults \(n)", icon: "Inbox")), timeout: .seconds(20))
            guard case .listCreated(let info)? = answer else {
                throw FaultRunError("CREATE_LIST on node 0: \(answer.map { "\($0)" } ?? "no answer")")
            }
            lists.append(info.summary.id)
        }
        return lists
    }
}
