import ChecklistCommandLine
import ChecklistTesting
import Foundation

/// `checklist-bench restart`: how long a server takes to start on a big
/// store, and what the store costs in memory once loaded. A snapshot of N
/// items is written here and loaded into a data directory with the offline
/// `checklistd import` (which writes the server's own snapshot: parallel
/// gzip members, as compaction does); neither is timed. Then the server is
/// started on it `--runs` times: from spawning the process to its
/// `listening on` line.
enum RestartScenario {
    /// The scenario's options, for the parser and `--help`.
    static let spec = CommandSpec(
        name: "restart", summary: "start-up time on a big store; resident bytes per item after",
        options: [
            .value("--items", "N", "items (default 10000000)"),
            .value("--lists", "N", "lists (default items/100000)"),
            BenchOptions.textBytes(40),
            .value("--runs", "N", "starts timed (default 1)"),
            .value("--data-dir", "DIR", "keep the data directory here (default: a temporary one)"),
            BenchOptions.json,
        ])

    static func run(_ args: BenchArguments) throws {
        let items = try args.int("items", default: 10_000_000, min: 1)
        let lists = try args.int("lists", default: max(1, items / 100_000), min: 1)
        let textBytes = try args.int("text-bytes", default: 40, min: 8)
        let runs = try args.int("runs", default: 1, min: 1)
        let checklistd = try ProductLocator.path(of: "checklistd")

        let files = try TemporaryDirectory(prefix: "checklist-bench-restart")
        defer { files.remove() }
        let snapshot = files.appending("bench.ckss.gz")
        // --data-dir keeps the store (and reuses one already made there).
        let data = args.string("data-dir") ?? files.appending("data")
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        if newestSnapshot(in: data) == nil {
            _ = try SnapshotScenario.writeSnapshot(to: snapshot, items: items, lists: lists, textBytes: textBytes)
            try runToEnd(checklistd, ["import", "--data-dir", data, snapshot])
            try FileManager.default.removeItem(atPath: snapshot)
        }
        let empty = files.appending("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)

        // The same server on an empty directory: what the store adds is the difference.
        let baseline = try ServerProcess.start(executable: checklistd, arguments: serverArguments(empty))
        let baselineRss = ResourceUsage.residentBytes(pid: baseline.pid) ?? 0
        baseline.stop()

        var samples: [(ms: Double, snapshotMs: Double, replayMs: Double, rss: Int, peak: Int, cpuMs: Double, mainCpuMs: Double)] = []
        for _ in 0..<runs {
            let started = ContinuousClock.now
            let server = try ServerProcess.start(executable: checklistd, arguments: serverArguments(data), readyTimeout: .seconds(300))
            let took = SnapshotScenario.seconds(started.duration(to: .now)) * 1000
            let cpu = ResourceUsage.cpuMilliseconds(pid: server.pid)
            let rss = ResourceUsage.residentBytes(pid: server.pid) ?? 0
            let peak = server.peakResidentBytes ?? 0
            server.stop()
            let output = server.standardOutput + server.standardError
            samples.append((took, recoveredField("snapshotMs", in: output) ?? -1, recoveredField("replayMs", in: output) ?? -1, rss, peak,
                            cpu?.process ?? -1, cpu?.mainThread ?? -1))
            if !args.flag("json") {
                print(String(format: "run %d: %.0f ms to listening, CPU %.0f ms (main thread %.0f ms)", samples.count, took,
                             cpu?.process ?? -1, cpu?.mainThread ?? -1))
            }
        }
        let sorted = samples.sorted { $0.ms < $1.ms }
        let median = sorted[sorted.count / 2]

        var report = BenchReport()
        report.add("scenario", "restart")
        report.add("items", items)
        report.add("lists", lists)
        report.add("runs", runs)
        report.add("snapshotFileBytes", newestSnapshot(in: data).map(fileSize) ?? 0)
        report.add("restartMs", median.ms)
        report.add("restartMinMs", sorted[0].ms)
        report.add("snapshotMs", median.snapshotMs)
        report.add("replayMs", median.replayMs)
        // CPU up to the listening line: less sensitive than the wall to
        // other work on the machine.
        report.add("serverCpuMs", median.cpuMs)
        report.add("mainThreadCpuMs", median.mainCpuMs)
        report.add("runsMs", samples.map { String(format: "%.0f", $0.ms) }.joined(separator: " "))
        report.add("runsCpuMs", samples.map { String(format: "%.0f", $0.cpuMs) }.joined(separator: " "))
        report.add("serverRssBytes", median.rss)
        report.add("baselineRssBytes", baselineRss)
        report.add("bytesPerItem", Double(median.rss - baselineRss) / Double(items))
        report.add("serverPeakRssBytes", median.peak)
        report.print(json: args.flag("json"))
    }

    static func serverArguments(_ dataDirectory: String) -> [String] {
        ["--host", "127.0.0.1", "--port", "0", "--data-dir", dataDirectory]
    }

    /// Field `name` (`snapshotMs`, `replayMs`) of the server's
    /// `event=recovered` log line.
    static func recoveredField(_ name: String, in output: String) -> Double? {
        guard let line = output.split(separator: "\n").first(where: { $0.contains("event=recovered") }),
              let field = line.split(separator: " ").first(where: { $0.hasPrefix(name + "=") }) else { return nil }
        return Double(field.dropFirst(name.count + 1))
    }

    /// Runs `executable` and waits for it; throws unless it exits 0.
    static func runToEnd(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchFailure(description: "\(executable) \(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
        }
    }

    static func newestSnapshot(in directory: String) -> String? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasPrefix("snapshot-") && $0.hasSuffix(".ckss.gz") }.max().map { directory + "/" + $0 }
    }

    static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }
}
