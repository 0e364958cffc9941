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
    static let options: Set<String> = ["items", "connections", "page", "pattern", "seconds", "text-bytes",
                                       "server", "filter", "json"]

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

    static func run(_ args: BenchArguments) async throws {
        try args.check(allowed: options)
        let items = try args.int("items", default: 1_000_000, min: 1)
        let connections = try args.int("connections", default: 50, min: 1)
        let pageSize = try args.int("page", default: 100, min: 1)
        let seconds = try args.double("seconds", default: 10)
        let textBytes = try args.int("text-bytes", default: 40)
        guard let pattern = Pattern(rawValue: args.string("pattern") ?? "sequential") else {
            throw BenchArguments.UsageError(description: "--pattern is sequential, random, deep or head")
        }
        let filter = try RowFilter(name: args.string("filter") ?? "all")

        let target = try BenchTarget(args)
        defer { target.stop() }
        let setup = try await target.connect()
        let list = try await target.benchList(items: items, textBytes: textBytes, on: setup)
        let total = Int(try await setup.page(list.id, limit: 1, filter: filter).total)
        await setup.close()

        var clients: [ChecklistConnection] = []
        for _ in 0..<connections { clients.append(try await target.connect()) }
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
        let started = ContinuousClock.now
        let merged = try await withThrowingTaskGroup(of: LatencyHistogram.self) { group in
            for (n, client) in clients.enumerated() {
                group.addTask {
                    var rng = SplitMix64(seed: UInt64(n + 1))
                    var histogram = LatencyHistogram()
                    var sequential = (total / connections) * n
                    while ContinuousClock.now < deadline {
                        let offset: Int
                        switch pattern {
                        case .sequential:
                            offset = sequential
                            sequential = sequential + pageSize >= total ? 0 : sequential + pageSize
                        case .random:
                            offset = Int(rng.next() % UInt64(max(1, total - pageSize)))
                        case .deep, .head:
                            let span = min(total, pageSize * 100)
                            let base = pattern == .deep ? max(0, total / 2 - span / 2) : 0
                            offset = base + Int(rng.next() % UInt64(max(1, span - pageSize)))
                        }
                        let t0 = DispatchTime.now().uptimeNanoseconds
                        let page = try await client.page(list.id, start: .offset(UInt64(offset)), limit: pageSize, filter: filter)
                        histogram.record(nanos: DispatchTime.now().uptimeNanoseconds - t0)
                        guard page.items.count == min(pageSize, total - offset), page.offset == UInt64(offset) else {
                            throw BenchArguments.UsageError(description: "wrong page at offset \(offset): \(page.items.count) rows")
                        }
                    }
                    return histogram
                }
            }
            var merged = LatencyHistogram()
            for try await h in group { merged.merge(h) }
            return merged
        }
        let elapsed = started.duration(to: .now)
        for client in clients { await client.close() }

        let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var report = BenchReport()
        report.add("scenario", "pages")
        report.add("pattern", pattern.rawValue)
        report.add("items", items)
        report.add("connections", connections)
        report.add("pageSize", pageSize)
        report.add("pages", merged.count)
        report.add("pagesPerSecond", Double(merged.count) / elapsedSeconds)
        report.addLatencies(merged)
        report.add("maxMs", merged.maxMs)
        report.print(json: args.flag("json"))
    }
}

extension RowFilter {
    init(name: String) throws {
        switch name {
        case "all": self = .all
        case "checked": self = .checked
        case "unchecked": self = .unchecked
        default: throw BenchArguments.UsageError(description: "--filter is all, checked or unchecked")
        }
    }
}
