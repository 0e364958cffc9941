import ChecklistCommandLine
import ChecklistClient
import ChecklistModel
import ChecklistTesting
import Foundation

/// `checklist-bench cache`: a PostgreSQL node's cache of lists
/// (`checklistd --postgres --cache-bytes`), in two parts, each on a node
/// started afresh (so its cache is empty):
///
/// 1. **Load:** one list of `--items` items is imported (stored as a
///    checkpoint); then the time from a GET_PAGE of it to its PAGE, which
///    is the load from PostgreSQL into the empty cache.
/// 2. **Bounded memory:** `--lists` lists whose estimated memory totals
///    `--factor` times `--cache-bytes` are imported; then every row of
///    every list is paged through, twice, and the node's peak RSS is
///    reported beside the cache's budget.
enum CacheScenario {
    /// The scenario's options, for the parser and `--help`.
    static let spec = CommandSpec(
        name: "cache", summary: "a PostgreSQL node's cache of lists: load time, peak RSS",
        options: [
            .value("--postgres", "CONNINFO", "an empty database (needed)"),
            .value("--items", "N", "items of the list loaded (default 1000000)"),
            .value("--cache-bytes", "BYTES", "the node's --cache-bytes (default 67108864)"),
            .value("--factor", "N", "the lists paged total factor x the cache (default 10)"),
            .value("--lists", "N", "lists (default 40)"),
            BenchOptions.textBytes(40),
            .value("--page", "N", "rows a GET_PAGE (default 1000)"),
            BenchOptions.json,
        ])

    static func run(_ args: BenchArguments) async throws {
        guard args.string("postgres") != nil else {
            throw UsageError("cache needs --postgres CONNINFO (an empty database)")
        }
        let items = try args.int("items", default: 1_000_000, min: 1)
        let cacheBytes = try args.int("cache-bytes", default: 64 << 20, min: 1 << 20)
        let factor = try args.int("factor", default: 10, min: 1)
        let lists = try args.int("lists", default: 40, min: 2)
        let textBytes = try args.int("text-bytes", default: 40, min: 8)
        let pageRows = try args.int("page", default: 1000, min: 1)
        // The server's estimate per item (docs/POSTGRES.md, "The cache"):
        // 40 bytes plus the text, plus a due date or price where set.
        let estimatePerItem = 40 + textBytes + 4
        let manyItems = factor * cacheBytes / estimatePerItem

        let files = try TemporaryDirectory(prefix: "checklist-bench-cache")
        defer { files.remove() }
        let big = try SnapshotScenario.writeSnapshot(to: files.appending("big.ckss.gz"), items: items, lists: 1, textBytes: textBytes)
        let many = try SnapshotScenario.writeSnapshot(to: files.appending("many.ckss.gz"), items: manyItems, lists: lists,
                                                      textBytes: textBytes)
        let importLimit = max(big.rawBytes, many.rawBytes) * 2 + (1 << 20)
        let target = try BenchTarget(args, extraServerArguments: ["--cache-bytes", String(cacheBytes),
                                                                  "--max-import-bytes", String(importLimit)])
        defer { target.stop() }

        // 1. One big list into an empty cache.
        try await importFile(files.appending("big.ckss.gz"), target)
        try waitForCheckpoints(of: 1, target)
        _ = try target.restart()
        let reader = try await target.connect()
        let asked = ContinuousClock.now
        let first = try await reader.page(ListID(1), limit: 100)
        let loadSeconds = SnapshotScenario.seconds(asked.duration(to: .now))
        guard first.total == UInt64(items), first.items.count == 100 else {
            throw BenchFailure(description: "the big list has \(first.total) items, expected \(items)")
        }
        let again = ContinuousClock.now
        _ = try await reader.page(ListID(1), start: .offset(UInt64(items / 2)), limit: 100)
        let residentSeconds = SnapshotScenario.seconds(again.duration(to: .now))
        await reader.close()
        let bigRss = target.serverPeakRssBytes ?? 0

        // 2. Lists totalling `factor` times the cache, paged through twice.
        try await importFile(files.appending("many.ckss.gz"), target)
        try waitForCheckpoints(of: lists, target)
        _ = try target.restart()
        let pager = try await target.connect()
        let started = ContinuousClock.now
        var rows = 0
        for _ in 0..<2 {
            for summary in try await pager.lists() {
                var offset = 0
                while offset < Int(summary.itemCount) {
                    let page = try await pager.page(summary.id, start: .offset(UInt64(offset)), limit: pageRows)
                    guard !page.items.isEmpty else { break }
                    offset += page.items.count
                }
                guard offset == Int(summary.itemCount) else {
                    throw BenchFailure(description: "list \(summary.id): paged \(offset) of \(summary.itemCount) rows")
                }
                rows += offset
            }
        }
        let pagingSeconds = SnapshotScenario.seconds(started.duration(to: .now))
        await pager.close()
        let manyRss = target.serverPeakRssBytes ?? 0

        var report = BenchReport()
        report.add("scenario", "cache")
        report.add("items", items)
        report.add("textBytes", textBytes)
        report.add("checkpointBytes", Int(big.compressedBytes))
        report.add("loadToPageMs", loadSeconds * 1000)
        report.add("residentPageMs", residentSeconds * 1000)
        report.add("bigListPeakRssBytes", bigRss)
        report.add("cacheBytes", cacheBytes)
        report.add("lists", lists)
        report.add("listItems", manyItems)
        report.add("estimatedListBytes", manyItems * estimatePerItem)
        report.add("rowsPaged", rows)
        report.add("pagingSeconds", pagingSeconds)
        report.add("pagingPeakRssBytes", manyRss)
        report.add("peakRssToCache", Double(manyRss) / Double(cacheBytes))
        report.print(json: args.flag("json"))
    }

    /// IMPORT (mode REPLACE) of a snapshot file.
    /// Waits until the node's upkeep has written checkpoints of `lists`
    /// lists since the last start (`event=postgres_checkpoint`): an import
    /// is stored as one change until then, and the cold load would time its
    /// replay instead of the checkpoint a node loads in steady state.
    private static func waitForCheckpoints(of lists: Int, _ target: BenchTarget) throws {
        guard let process = target.serverProcess else { return }
        let deadline = ContinuousClock.now + .seconds(600)
        while true {
            let offset = process.standardErrorCount  // read first: a line after it is waited for, one before it counted
            if process.standardError.components(separatedBy: "event=postgres_checkpoint").count - 1 >= lists { return }
            guard ContinuousClock.now < deadline,
                  process.waitForStandardError(containing: "event=postgres_checkpoint", after: offset, timeout: .seconds(60)) else {
                throw BenchFailure(description: "the node wrote no checkpoint of the imported lists within 600 s")
            }
        }
    }

    private static func importFile(_ path: String, _ target: BenchTarget) async throws {
        guard let file = FileHandle(forReadingAtPath: path) else { throw BenchFailure(description: "cannot read \(path)") }
        defer { try? file.close() }
        let client = try await target.connect()
        _ = try await client.importSnapshot(mode: .replace, chunkBytes: 1 << 20, window: 4) { count in
            let data = try file.read(upToCount: count) ?? Data()
            return data.isEmpty ? nil : Array(data)
        }
        await client.close()
    }
}
