import ChecklistCommandLine
import ChecklistClient
import ChecklistLatency
import ChecklistModel
import ChecklistRandom
import ChecklistWire
import Foundation
import Synchronization

/// `checklist-bench pages`: page-fetch throughput and latency from C
/// connections, each a closed loop of GET_PAGE requests.
enum PagesScenario {
    /// The scenario's options, for the parser and `--help`.
    static let spec = CommandSpec(
        name: "pages", summary: "page-fetch throughput and latency; tool CPU per page",
        options: [
            .value("--items", "N", "items of the list paged through (default 1000000)"),
            .value("--connections", "N", "connections, each a closed loop of GET_PAGE (default 50)"),
            .value("--page", "N", "rows a page (default 100)"),
            .value("--pattern", "sequential|random|deep|head", "which pages are read (default sequential)"),
            .value("--seconds", "S", "how long it runs (default 10)"),
            BenchOptions.textBytes(40),
            .value("--filter", "all|checked|unchecked", "the pages' filter (default all)"),
            .value("--decode", "rows|items", "decode the rows' bytes only, or into items (default rows)"),
            .value("--compression", "on|off", "ask for compressed frames (default on)"),
            .value("--executor", "reader|pool", "where answers are decoded (default reader)"),
            BenchOptions.server, BenchOptions.postgres,
            BenchOptions.json,
        ] + BenchOptions.tls)

    enum Pattern: String {
        /// Each connection reads on from its own start, wrapping at the end.
        case sequential
        /// Uniformly random offsets.
        case random
        /// Random pages among the 100 pages around the middle of the list.
        case deep
        /// Random pages among the first 100 pages: `deep`'s reference.
        case head
    }

    /// The options of one run.
    struct Settings {
        let items: Int
        let connections: Int
        let pageSize: Int
        let seconds: Double
        let textBytes: Int
        let pattern: Pattern
        let filter: RowFilter
        /// `--decode rows` (default): `pageBytes`, rows decoded in place with
        /// no allocation per row; `--decode items`: `page`, every row an `Item`.
        let decodeItems: Bool
        /// `--compression on` (default): the connections announce COMPRESSION;
        /// `off`: they do not, as `load --compression off` (the thin client) does.
        let compression: Bool
        /// `--executor reader` (default): the fetching tasks prefer
        /// `ChecklistConnection.readerExecutor`, so an answer resumes its task
        /// on the thread that read it; `pool`: they run on the cooperative pool.
        let onReader: Bool

        init(_ args: BenchArguments) throws {
            items = try args.int("items", default: 1_000_000, min: 1)
            connections = try args.int("connections", default: 50, min: 1)
            pageSize = try args.int("page", default: 100, min: 1)
            seconds = try args.double("seconds", default: 10)
            textBytes = try args.int("text-bytes", default: 40)
            guard let pattern = Pattern(rawValue: args.string("pattern") ?? "sequential") else {
                throw UsageError("--pattern is sequential, random, deep or head")
            }
            self.pattern = pattern
            filter = try RowFilter(name: args.string("filter") ?? "all")
            switch args.string("decode") ?? "rows" {
            case "rows": decodeItems = false
            case "items": decodeItems = true
            default: throw UsageError("--decode is rows or items")
            }
            switch args.string("compression") ?? "on" {
            case "on": compression = true
            case "off": compression = false
            default: throw UsageError("--compression is on or off")
            }
            switch args.string("executor") ?? "reader" {
            case "reader": onReader = true
            case "pool": onReader = false
            default: throw UsageError("--executor is reader or pool")
            }
        }
    }

    static func run(_ args: BenchArguments) async throws {
        let settings = try Settings(args)
        let target = try BenchTarget(args)
        defer { target.stop() }
        let setup = try await target.connect()
        let list = try await target.benchList(items: settings.items, textBytes: settings.textBytes, on: setup)
        let total = Int(try await setup.page(list.id, limit: 1, filter: settings.filter).total)
        await setup.close()

        var clients: [ChecklistConnection] = []
        for _ in 0..<settings.connections { clients.append(try await target.connect(compression: settings.compression)) }
        let started = ContinuousClock.now
        var cpu = ToolCPU()
        let merged = try await fetchPages(of: list.id, total: total, on: clients, settings)
        cpu.stop()
        let elapsed = started.duration(to: .now)
        for client in clients { await client.close() }
        report(settings, merged, elapsed: elapsed, transport: target.transport, cpu: cpu).print(json: args.flag("json"))
    }

    /// Every client reads pages in a closed loop until the time is up,
    /// checking each; returns their latencies merged.
    private static func fetchPages(of list: ListID, total: Int, on clients: [ChecklistConnection],
                                   _ settings: Settings) async throws -> LatencyHistogram {
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(settings.seconds * 1000)))
        let executor = settings.onReader ? ChecklistConnection.readerExecutor : nil
        return try await withThrowingTaskGroup(of: LatencyHistogram.self) { group in
            for (n, client) in clients.enumerated() {
                group.addTask(executorPreference: executor) {
                    var offsets = PageOffsets(settings, total: total, client: n)
                    var histogram = LatencyHistogram()
                    while ContinuousClock.now < deadline {
                        let offset = offsets.next()
                        let t0 = DispatchTime.now().uptimeNanoseconds
                        let (rows, pageOffset) = try await fetch(list, offset: offset, on: client, settings)
                        histogram.record(nanos: DispatchTime.now().uptimeNanoseconds - t0)
                        guard rows == min(settings.pageSize, total - offset), pageOffset == UInt64(offset) else {
                            throw BenchFailure(description: "wrong page at offset \(offset): \(rows) rows")
                        }
                    }
                    return histogram
                }
            }
            var merged = LatencyHistogram()
            for try await h in group { merged.merge(h) }
            return merged
        }
    }

    /// One page, as `--decode` says; returns its row count (rows visited) and offset.
    private static func fetch(_ list: ListID, offset: Int, on client: ChecklistConnection,
                              _ settings: Settings) async throws -> (rows: Int, offset: UInt64) {
        if settings.decodeItems {
            let page = try await client.page(list, start: .offset(UInt64(offset)), limit: settings.pageSize, filter: settings.filter)
            return (page.items.count, page.offset)
        }
        let page = try await client.pageBytes(list, start: .offset(UInt64(offset)), limit: settings.pageSize, filter: settings.filter)
        var rows = 0
        page.forEachRow { _ in rows += 1 }
        return (rows, page.offset)
    }

    /// The offsets one client asks for, as `--pattern` says.
    struct PageOffsets {
        let pattern: Pattern
        let total: Int
        let pageSize: Int
        var rng: SplitMix64
        var sequential: Int

        init(_ settings: Settings, total: Int, client n: Int) {
            pattern = settings.pattern
            self.total = total
            pageSize = settings.pageSize
            rng = SplitMix64(seed: UInt64(n + 1))
            sequential = (total / settings.connections) * n
        }

        mutating func next() -> Int {
            switch pattern {
            case .sequential:
                let offset = sequential
                sequential = sequential + pageSize >= total ? 0 : sequential + pageSize
                return offset
            case .random:
                return Int(rng.next() % UInt64(max(1, total - pageSize)))
            case .deep, .head:
                let span = min(total, pageSize * 100)
                let base = pattern == .deep ? max(0, total / 2 - span / 2) : 0
                return base + Int(rng.next() % UInt64(max(1, span - pageSize)))
            }
        }
    }

    private static func report(_ settings: Settings, _ merged: LatencyHistogram, elapsed: Duration,
                               transport: String, cpu: ToolCPU) -> BenchReport {
        let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var report = BenchReport()
        report.add("scenario", "pages")
        report.add("transport", transport)
        report.add("pattern", settings.pattern.rawValue)
        report.add("decode", settings.decodeItems ? "items" : "rows")
        report.add("compression", settings.compression ? "on" : "off")
        report.add("executor", settings.onReader ? "reader" : "pool")
        report.add("items", settings.items)
        report.add("connections", settings.connections)
        report.add("pageSize", settings.pageSize)
        report.add("pages", merged.count)
        report.add("pagesPerSecond", Double(merged.count) / elapsedSeconds)
        report.addLatencies(merged)
        report.add("maxMs", merged.maxMs)
        report.addToolCPU(cpu, requests: Int(merged.count))
        return report
    }
}

extension RowFilter {
    init(name: String) throws {
        switch name {
        case "all": self = .all
        case "checked": self = .checked
        case "unchecked": self = .unchecked
        default: throw UsageError("--filter is all, checked or unchecked")
        }
    }
}
