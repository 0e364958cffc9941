import ChecklistCommandLine
import ChecklistClient
import ChecklistModel
import ChecklistSocket
import ChecklistWire
import Foundation

/// `checklist-bench load`: C connections (up to 10,000) sending a mix of
/// GET_PAGE, PATCH (a toggle, or an insert at the end) and LIST_LISTS, closed loop (each connection keeps
/// `--pipeline` requests outstanding) or open loop (`--rate` requests per
/// second in all, latency counted from when each was due). Every answer is
/// checked: type, request id and order, page rows (ids, texts, counts,
/// offsets), revisions that never go back and grow with each PATCH.
///
/// The connections are driven by a few `LoadWorker` threads, each
/// multiplexing its share of non-blocking sockets on ChecklistIO's
/// readiness layer (as the server's loops and the client's I/O thread do).
/// Loopback only, and bounded: at most 10,000 connections and 24 hours.
enum LoadScenario {
    /// The scenario's options, for the parser and `--help`.
    static let spec = CommandSpec(
        name: "load", summary: "many connections, a mix of requests; every answer checked; loopback only",
        options: [
            .value("--connections", "N", "connections (default 50, at most 10000)"),
            .value("--seconds", "S", "how long it runs (default 10, at most 86400)"),
            .value("--rate", "R", "requests a second over all connections (default: as fast as answered)"),
            .value("--mix", "KIND=WEIGHT,...", "the requests' mix of page, patch, lists and insert\n(default page=70,patch=20,lists=10; insert mixes with patch only)"),
            .value("--pipeline", "N", "requests in flight a connection (default 1, at most 1024)"),
            .value("--lists", "N", "lists (default 10)"),
            .value("--items", "N", "items a list (default 1000)"),
            .value("--page", "N", "rows a GET_PAGE (default 50)"),
            .value("--threads", "N", "client threads (default 1, 2 above 100 connections)"),
            .value("--seed", "N", "seed of the random choices (default 1)"),
            .value("--compression", "off|on", "ask for compressed frames (default off)"),
            .value("--offset", "random|N", "where pages start (default random)"),
            BenchOptions.textBytes(0),
            .value("--writes", "random|by-node", "with by-node and --nodes N, a connection on node k PATCHes\n"
                   + "only the lists whose index is k mod N (default random)"),
            BenchOptions.server, BenchOptions.postgres, BenchOptions.nodes,
            BenchOptions.json,
        ] + BenchOptions.tls)
    static let maxConnections = 10_000

    /// The options of one run.
    struct Settings {
        let connections: Int
        let seconds: Double
        let rate: Double?
        let mix: LoadMix
        let pipeline: Int
        let listCount: Int
        let items: Int
        let pageSize: Int
        let threads: Int
        let seed: UInt64
        let compression: Bool
        /// nil: random offsets.
        let pageOffset: Int?
        let textBytes: Int
        let writes: LoadWrites

        init(_ args: BenchArguments) throws {
            connections = try args.int("connections", default: 50, min: 1)
            guard connections <= maxConnections else {
                throw UsageError("--connections: at most \(maxConnections)")
            }
            seconds = try args.double("seconds", default: 10)
            guard seconds <= 86_400 else { throw UsageError("--seconds: at most 86400") }
            rate = args.string("rate") == nil ? nil : try args.double("rate", default: 0)
            mix = try LoadMix(args.string("mix") ?? "page=70,patch=20,lists=10")
            pipeline = try args.int("pipeline", default: 1, min: 1)
            guard pipeline <= 1024 else { throw UsageError("--pipeline: at most 1024") }
            listCount = try args.int("lists", default: 10, min: 1)
            items = try args.int("items", default: 1000, min: 1)
            pageSize = try args.int("page", default: 50, min: 1)
            threads = min(connections, try args.int("threads", default: connections <= 100 ? 1 : 2, min: 1))
            seed = UInt64(try args.int("seed", default: 1))
            switch args.string("compression") ?? "off" {
            case "off": compression = false
            case "on": compression = true
            default: throw UsageError("--compression is off or on")
            }
            let offset = args.string("offset") ?? "random"
            pageOffset = offset == "random" ? nil : try args.int("offset", default: 0)
            if let pageOffset, pageOffset >= items {
                throw UsageError("--offset: \(pageOffset) is past the \(items) items")
            }
            guard let writes = LoadWrites(rawValue: args.string("writes") ?? "random") else {
                throw UsageError("--writes is random or by-node")
            }
            self.writes = writes
            textBytes = try args.int("text-bytes", default: 0)
            guard textBytes <= 4096 else { throw UsageError("--text-bytes: at most 4096") }
            if let list = args.string("server") {
                for server in list.split(separator: ",") { try requireLoopback(server.trimmingCharacters(in: .whitespaces)) }
            }
        }
    }

    /// What one run measured, besides the workers' merged result.
    struct RunFigures {
        var connectNanos: UInt64 = 0
        var windowNanos: UInt64 = 0
        /// The tool's CPU from the start of the run to the end of its window.
        var cpu = ToolCPU()
        var openAtEnd = 0
        var rssBefore: Int?
        var rssDuring: Int?
    }

    static func run(_ args: BenchArguments) async throws {
        let (report, examples) = try await measure(args)
        report.print(json: args.flag("json"))
        if !args.flag("json") {
            for example in examples { FileHandle.standardError.write(Data("  e.g. \(example)\n".utf8)) }
        }
    }

    /// Runs the load as `args` say and returns its report, with examples of
    /// the errors it met (the `pgbench` scenario runs it between anchors).
    static func measure(_ args: BenchArguments) async throws -> (BenchReport, examples: [String]) {
        let settings = try Settings(args)
        raiseFileDescriptorLimit()
        // A server of our own must admit every connection (and the set-up one).
        let target = try BenchTarget(args, extraServerArguments: ["--max-connections", "\(settings.connections + 16)"])
        defer { target.stop() }
        let (plan, lists) = try await prepare(settings, on: target)
        var figures = RunFigures(rssBefore: target.serverPID.flatMap(ResourceUsage.residentBytes(pid:)))

        let shared = LoadShared()
        for index in 0..<settings.threads { LoadWorker.start(index: index, plan: plan, shared: shared) }
        var progress = LoadProgress()
        figures.connectNanos = try await connectAll(shared, settings, progress: &progress)
        let result = try await runAndDrain(shared, settings, target: target, progress: &progress, figures: &figures)

        if args.string("server") != nil, let cleanup = try? await target.connect(name: "checklist-bench-load-cleanup") {
            // Leave a server we did not start as we found it.
            for list in lists { _ = try? await cleanup.deleteList(list) }
            await cleanup.close()
        }
        return (report(settings, result, figures, target: target), result.examples)
    }

    /// Sets up the load lists with the client library and plans the run.
    /// The set-up connection is closed before the run: it must not take one
    /// of the server's connection slots.
    private static func prepare(_ settings: Settings, on target: BenchTarget) async throws -> (LoadPlan, [ListID]) {
        let setup = try await target.connect(name: "checklist-bench-load-setup")
        // The workers' connections go to the server that answered (the first of several that works).
        let address = try SocketAddress(host: setup.server.host, port: setup.server.port)
        guard settings.pageSize <= Int(setup.serverLimits.maxPageRows) else {
            throw UsageError("--page: the server allows at most \(setup.serverLimits.maxPageRows) rows")
        }
        let lists = try await makeLists(count: settings.listCount, items: settings.items, textBytes: settings.textBytes, on: setup)
        let plan = LoadPlan(address: address, connections: settings.connections, threads: settings.threads,
                            pipeline: settings.pipeline, rate: settings.rate, mix: settings.mix, lists: lists,
                            items: settings.items, pageSize: settings.pageSize, pageOffset: settings.pageOffset,
                            textBytes: settings.textBytes, compression: settings.compression,
                            maxFrameBytes: setup.serverLimits.maxFrameBytes, seed: settings.seed,
                            tls: try target.tls.map { try TLSContext(client: $0) }, serverName: setup.server.host)
        var spread = plan
        spread.writes = settings.writes
        if settings.writes == .byNode, target.nodeCount > settings.listCount {
            throw UsageError("--writes by-node: --lists must be at least --nodes")
        }
        if target.nodeCount > 1 {
            spread.nodes = try target.nodeAddresses.map { try SocketAddress(host: $0.host, port: $0.port) }
            try await target.waitForLists(lists, onEveryNode: true)
        }
        await setup.close()
        return (spread, lists)
    }

    /// Waits until every worker has made its connections (or the connect
    /// time limit passed); returns how long it took. Throws when not one
    /// connection could be made.
    private static func connectAll(_ shared: LoadShared, _ settings: Settings,
                                   progress: inout LoadProgress) async throws -> UInt64 {
        let connectStart = monotonicNanos()
        let connectLimit: UInt64 = (30 + UInt64(settings.connections / 250)) * 1_000_000_000
        while shared.workersConnected.load(ordering: .acquiring) < settings.threads && monotonicNanos() - connectStart < connectLimit {
            progress.update(shared, phase: "connecting", elapsedNanos: monotonicNanos() - connectStart, target: settings.connections)
            try await Task.sleep(for: .milliseconds(50))
        }
        let connectNanos = monotonicNanos() - connectStart
        guard shared.connected.load(ordering: .relaxed) > 0 else {
            shared.set(.stopping)
            let failed = await finish(shared, threads: settings.threads)
            throw BenchFailure(description: "no connection could be made: \(failed.examples.first ?? "?")")
        }
        return connectNanos
    }

    /// Runs the load for `--seconds` (or until the server has closed every
    /// connection), then drains the workers and merges their results.
    private static func runAndDrain(_ shared: LoadShared, _ settings: Settings, target: BenchTarget,
                                    progress: inout LoadProgress, figures: inout RunFigures) async throws -> LoadWorkerResult {
        let runStart = monotonicNanos()
        figures.cpu = ToolCPU()
        shared.runStartNanos.store(runStart, ordering: .releasing)
        shared.set(.running)
        progress.started(shared, target: settings.connections)
        let runNanos = UInt64(settings.seconds * 1e9)
        while shared.open.load(ordering: .relaxed) > 0 {
            // One reading of the clock per round: the time left is never negative.
            let elapsed = monotonicNanos() - runStart
            guard elapsed < runNanos else { break }
            progress.update(shared, phase: "running", elapsedNanos: elapsed, target: settings.connections)
            try await Task.sleep(for: .milliseconds(min(250, max(1, Int((runNanos - elapsed) / 1_000_000)))))
        }
        figures.rssDuring = target.serverPID.flatMap(ResourceUsage.residentBytes(pid:))
        figures.openAtEnd = shared.open.load(ordering: .relaxed)
        shared.set(.draining)
        figures.windowNanos = monotonicNanos() - runStart
        figures.cpu.stop()
        let result = await finish(shared, threads: settings.threads)
        progress.finish()
        return result
    }

    private static func report(_ settings: Settings, _ result: LoadWorkerResult, _ figures: RunFigures,
                               target: BenchTarget) -> BenchReport {
        let windowSeconds = Double(figures.windowNanos) / 1e9
        var report = BenchReport()
        report.add("scenario", "load")
        report.add("transport", target.transport)
        report.add("mode", settings.rate == nil ? "closed" : "open")
        report.add("connections", settings.connections)
        report.add("nodes", target.nodeCount)
        report.add("connectionsOpen", figures.openAtEnd)
        report.add("threads", settings.threads)
        report.add("pipeline", settings.pipeline)
        report.add("rate", settings.rate ?? 0)
        report.add("mix", settings.mix.description)
        report.add("writes", settings.writes.rawValue)
        report.add("lists", settings.listCount)
        report.add("items", settings.items)
        report.add("pageSize", settings.pageSize)
        report.add("offset", settings.pageOffset.map(String.init) ?? "random")
        report.add("textBytes", settings.textBytes)
        report.add("compression", settings.compression ? "on" : "off")
        report.add("connectSeconds", Double(figures.connectNanos) / 1e9)
        report.add("seconds", windowSeconds)
        report.add("requests", result.answered)
        report.add("requestsPerSecond", Double(result.answeredInWindow) / windowSeconds)
        report.addToolCPU(figures.cpu, requests: Int(result.answeredInWindow))
        for kind in LoadRequestKind.allCases {
            report.add("\(kind.name)Requests", result.answeredByKind[kind.rawValue])
        }
        report.add("errors", result.errorCount)
        report.add("errorsByCode", counts: result.errors.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        report.addLatencies(result.latency, includeP90: true)
        report.add("maxMs", result.latency.maxMs)
        report.add("bytesIn", result.bytesIn)
        report.add("bytesOut", result.bytesOut)
        if let rssBefore = figures.rssBefore, let rssDuring = figures.rssDuring {
            report.add("serverRssBeforeBytes", rssBefore)
            report.add("serverRssBytes", rssDuring)
            report.add("serverRssPerConnectionBytes", figures.openAtEnd > 0 ? (rssDuring - rssBefore) / figures.openAtEnd : 0)
        }
        if let peak = target.serverPeakRssBytes { report.add("serverPeakRssBytes", peak) }
        return report
    }

    /// Waits for every worker to finish (draining, then stopping if the
    /// drain overruns) and merges their results.
    private static func finish(_ shared: LoadShared, threads: Int) async -> LoadWorkerResult {
        let deadline = monotonicNanos() + LoadWorker.drainTime + 5_000_000_000
        while shared.workersFinished.load(ordering: .acquiring) < threads {
            if monotonicNanos() > deadline { shared.set(.stopping) }
            try? await Task.sleep(for: .milliseconds(20))
        }
        var merged = LoadWorkerResult()
        for result in shared.finishedResults { merged.merge(result) }
        return merged
    }

    /// Creates `count` lists of `items` rows "item 0", "item 1", ... (ids 1,
    /// 2, ... in order), filled with pipelined full PATCH batches.
    private static func makeLists(count: Int, items: Int, textBytes: Int, on connection: ChecklistConnection) async throws -> [ListID] {
        let batch = Int(connection.serverLimits.maxBatchOps)
        let run = "load-\(getpid())-\(UInt32(truncatingIfNeeded: monotonicNanos() / 1_000_000))"
        var lists: [ListID] = []
        for k in 0..<count {
            let list = try await connection.createList(name: "\(run)-\(k)", icon: "Inbox")
            var next = 0
            while next < items {
                var requests: [ChecklistWire.Request] = []
                while requests.count < 8 && next < items {
                    let n = min(batch, items - next)
                    let ops = (next..<next + n).map { i in
                        PatchOperation.insert(tempRef: nil, position: .end, fields: ItemFields(text: LoadPlan.itemText(i, textBytes: textBytes)))
                    }
                    requests.append(.patch(Patch(list: list.id, ops: ops)))
                    next += n
                }
                for answer in try await connection.send(batch: requests) {
                    if case .error(let e) = answer { throw ClientError.server(e.error) }
                }
            }
            lists.append(list.id)
        }
        return lists
    }

    /// `load` opens thousands of connections: it may only aim at this machine.
    private static func requireLoopback(_ server: String) throws {
        guard let address = try? SocketAddress(parsing: server.hasPrefix("localhost:") ? "127.0.0.1" + server.dropFirst(9) : server) else {
            throw UsageError("--server wants HOST:PORT, got '\(server)'")
        }
        let host = address.host
        guard host.hasPrefix("127.") || host == "::1" else {
            throw UsageError("load only targets loopback addresses (127.0.0.0/8, ::1), not \(host)")
        }
    }
}
