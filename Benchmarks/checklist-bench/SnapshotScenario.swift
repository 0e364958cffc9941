import ChecklistCommandLine
import ChecklistClient
import ChecklistLatency
import ChecklistModel
import ChecklistSnapshot
import ChecklistTesting
import Foundation
import Synchronization

/// `checklist-bench snapshot`: EXPORT and IMPORT throughput over the
/// protocol. A snapshot of N items is written to a file here, IMPORTed into
/// a fresh server, then EXPORTed back; throughput is in MB (10^6 bytes) of
/// raw records (the snapshot's uncompressed content) per second. Another
/// connection probes the server throughout: how long its requests wait is
/// what a transfer costs the other clients.
enum SnapshotScenario {
    /// The scenario's options, for the parser and `--help`.
    static let spec = CommandSpec(
        name: "snapshot", summary: "IMPORT then EXPORT of N items; MB/s, ratio, server peak RSS, probe latency",
        options: [
            .value("--items", "N", "items (default 1000000)"),
            .value("--lists", "N", "lists (default items/100000)"),
            BenchOptions.textBytes(40),
            .value("--chunk", "BYTES", "bytes an IMPORT chunk (default 1048576)"),
            .value("--window", "N", "chunks in flight (default 4)"),
            .value("--server-threads", "N", "the server's --threads (default: its own)"),
            .value("--import-inflate-threads", "N", "the server's --import-inflate-threads (default: its own)"),
            .value("--probe", "lists|ping", "what another connection asks meanwhile (default lists)"),
            .value("--probe-ms", "MS", "pause between probes (default 5)"),
            BenchOptions.json,
        ] + BenchOptions.tls)

    /// The options of one run.
    struct Settings {
        let items: Int
        let lists: Int
        let textBytes: Int
        let chunk: Int
        let window: Int
        /// 1 puts the probe on the transfer's event loop (the server it starts only).
        let serverThreads: Int
        /// The server's `--import-inflate-threads` (the server it starts only); nil: its default.
        let importInflateThreads: Int?
        let probePause: Int
        let probeKind: String
        let probeRequest: StallProbe.Kind

        init(_ args: BenchArguments) throws {
            items = try args.int("items", default: 1_000_000, min: 1)
            lists = try args.int("lists", default: max(1, items / 100_000), min: 1)
            textBytes = try args.int("text-bytes", default: 40, min: 8)
            chunk = try args.int("chunk", default: 1 << 20, min: 1024)
            window = try args.int("window", default: 4, min: 1)
            serverThreads = try args.int("server-threads", default: 0, min: 0)
            importInflateThreads = args.string("import-inflate-threads") == nil ? nil
                : try args.int("import-inflate-threads", default: 0, min: 0)
            probePause = try args.int("probe-ms", default: 5, min: 0)
            probeKind = args.string("probe") ?? "lists"
            guard let probeRequest = StallProbe.Kind(rawValue: probeKind) else {
                throw UsageError("--probe is lists or ping, not '\(probeKind)'")
            }
            self.probeRequest = probeRequest
        }
    }

    /// One direction of the transfer: its figures, its time, and what the
    /// probe saw meanwhile.
    struct Transfer<Summary> {
        var summary: Summary
        var seconds: Double
        var probes: LatencyHistogram
    }

    static func run(_ args: BenchArguments) async throws {
        let settings = try Settings(args)
        // The file to import, written once (not timed).
        let files = try TemporaryDirectory(prefix: "checklist-bench-snapshot")
        defer { files.remove() }
        let path = files.appending("bench.ckss.gz")
        let written = try writeSnapshot(to: path, items: settings.items, lists: settings.lists, textBytes: settings.textBytes)

        let target = try BenchTarget(args, extraServerArguments: ["--max-import-bytes", String(written.rawBytes * 2 + (1 << 20))]
                                     + (settings.serverThreads > 0 ? ["--threads", String(settings.serverThreads)] : [])
                                     + (settings.importInflateThreads.map { ["--import-inflate-threads", String($0)] } ?? []))
        defer { target.stop() }
        let client = try await target.connect()
        // Another client reads LIST_LISTS (which takes the store's lock) every
        // 5 ms throughout: its slowest answer is the longest pause an import
        // or export makes other clients see. (PING takes no lock: it measures
        // the event loop alone.)
        let probe = StallProbe(connection: try await target.connect(), kind: settings.probeRequest,
                               pause: .milliseconds(settings.probePause))
        let probing = Task { await probe.run() }
        var cpu = ToolCPU()
        let imported = try await importFile(path, on: client, settings, probe: probe)
        let exported = try await exportAll(on: client, settings, probe: probe)
        probing.cancel()
        _ = await probing.value
        cpu.stop()
        guard exported.summary.items == UInt64(settings.items) else {
            throw BenchFailure(description: "exported \(exported.summary.items) items, expected \(settings.items)")
        }
        await client.close()
        var report = report(settings, imported, exported, fileBytes: written.compressedBytes, target: target)
        // Every request the tool sent: IMPORT chunks, EXPORT chunks, probes.
        let importChunks = (Int(written.compressedBytes) + settings.chunk - 1) / max(1, settings.chunk)
        report.addToolCPU(cpu, requests: importChunks + Int(exported.summary.chunks)
                          + Int(imported.probes.count + exported.probes.count))
        report.print(json: args.flag("json"))
    }

    /// IMPORT (mode REPLACE), streamed from the file, checked against what it holds.
    private static func importFile(_ path: String, on client: ChecklistConnection, _ settings: Settings,
                                   probe: StallProbe) async throws -> Transfer<ImportOK> {
        guard let file = FileHandle(forReadingAtPath: path) else { throw BenchFailure(description: "cannot read \(path)") }
        let importStart = ContinuousClock.now
        let imported = try await client.importSnapshot(mode: .replace, chunkBytes: settings.chunk, window: settings.window) { count in
            let data = try file.read(upToCount: count) ?? Data()
            return data.isEmpty ? nil : Array(data)
        }
        let importSeconds = seconds(importStart.duration(to: .now))
        let importProbes = await probe.settled()
        try file.close()
        guard imported.items == UInt64(settings.items), imported.lists == UInt64(settings.lists) else {
            throw BenchFailure(description: "imported \(imported.lists) lists, \(imported.items) items; "
                                            + "expected \(settings.lists), \(settings.items)")
        }
        return Transfer(summary: imported, seconds: importSeconds, probes: importProbes)
    }

    /// EXPORT of everything, the data counted and dropped.
    private static func exportAll(on client: ChecklistConnection, _ settings: Settings,
                                  probe: StallProbe) async throws -> Transfer<ExportSummary> {
        let exportStart = ContinuousClock.now
        let exported = try await client.exportSnapshot(chunkBytes: settings.chunk, window: settings.window) { _ in }
        let exportSeconds = seconds(exportStart.duration(to: .now))
        return Transfer(summary: exported, seconds: exportSeconds, probes: await probe.settled())
    }

    private static func report(_ settings: Settings, _ imported: Transfer<ImportOK>, _ exported: Transfer<ExportSummary>,
                               fileBytes: UInt64, target: BenchTarget) -> BenchReport {
        var report = BenchReport()
        report.add("scenario", "snapshot")
        report.add("transport", target.transport)
        report.add("items", settings.items)
        report.add("lists", settings.lists)
        report.add("rawBytes", exported.summary.rawBytes)
        report.add("compressedBytes", exported.summary.compressedBytes)
        report.add("ratio", Double(exported.summary.rawBytes) / Double(max(1, exported.summary.compressedBytes)))
        report.add("exportMBps", Double(exported.summary.rawBytes) / 1e6 / exported.seconds)
        report.add("importMBps", Double(imported.summary.rawBytes) / 1e6 / imported.seconds)
        report.add("exportSeconds", exported.seconds)
        report.add("importSeconds", imported.seconds)
        report.add("probe", settings.probeKind)
        report.add("importMaxStallMs", imported.probes.maxMs)
        report.add("exportMaxStallMs", exported.probes.maxMs)
        report.add("importProbeP50Ms", imported.probes.quantileMs(0.5))
        report.add("importProbeP99Ms", imported.probes.quantileMs(0.99))
        report.add("exportProbeP50Ms", exported.probes.quantileMs(0.5))
        report.add("exportProbeP99Ms", exported.probes.quantileMs(0.99))
        report.add("importProbes", Int(imported.probes.count))
        report.add("exportProbes", Int(exported.probes.count))
        report.add("importFileBytes", fileBytes)
        report.add("exportChunks", exported.summary.chunks)
        report.add("peakRssBytes", target.serverPeakRssBytes ?? 0)
        report.add("clientPeakRssBytes", ResourceUsage.peakResidentBytes())
        return report
    }

    /// Writes `items` items over `lists` lists: texts of `textBytes` bytes,
    /// a third checked, a quarter with a due date, a fifth with a price.
    static func writeSnapshot(to path: String, items: Int, lists: Int, textBytes: Int) throws -> SnapshotWriter.Summary {
        let header = SnapshotHeader(createdAt: Int64(Date().timeIntervalSince1970), source: "checklist-bench",
                                    listCount: UInt64(lists), itemCount: UInt64(items), startLSN: 0, nextListID: ListID(UInt64(lists) + 1))
        let writer = try SnapshotWriter(path: path, header: header)
        let words = ["milk", "eggs", "bread", "walk", "the", "dog", "call", "mum", "book", "tickets", "pay", "rent", "fix", "bike"]
        var next = 0
        for l in 0..<lists {
            let count = items / lists + (l < items % lists ? 1 : 0)
            try writer.writeList(SnapshotList(namespace: .default, id: ListID(UInt64(l + 1)), name: "List \(l + 1)", icon: "Inbox",
                                              revision: 2, nextItemID: ItemID(UInt64(count + 1)), itemCount: UInt64(count)))
            for i in 0..<count {
                var text = "\(next) "
                var w = next
                while text.utf8.count < textBytes {
                    text += words[w % words.count] + " "
                    w = w / 3 + 7
                }
                let fields = ItemFields(text: String(text.utf8.prefix(textBytes))!, checked: next % 3 == 0,
                                        due: next % 4 == 0 ? 1_700_000_000 + Int64(next % 1_000_000) : nil,
                                        remind: next % 8 == 0, price: next % 5 == 0 ? Int64(next % 10_000) : nil)
                try writer.writeItem(Item(id: ItemID(UInt64(i + 1)), fields: fields))
                next += 1
            }
        }
        return try writer.finish(endLSN: 0)
    }

    /// A paced loop of LIST_LISTS (or PING) on its own connection, keeping
    /// the latencies of its answers since it was last asked.
    final class StallProbe: Sendable {
        /// The request the probe repeats.
        enum Kind: String, Sendable {
            case lists, ping
        }

        struct State {
            var latencies = LatencyHistogram()
            var completed = 0
            var waiters: [(after: Int, continuation: CheckedContinuation<Void, Never>)] = []
            var stopped = false
        }

        let connection: ChecklistConnection
        let kind: Kind
        /// Between an answer and the next request.
        let pause: Duration
        private let state = Mutex(State())

        init(connection: ChecklistConnection, kind: Kind, pause: Duration) {
            self.connection = connection
            self.kind = kind
            self.pause = pause
        }

        /// One request; false once the connection failed.
        private func ask() async -> Bool {
            switch kind {
            case .lists: return (try? await connection.lists()) != nil
            case .ping: return (try? await connection.ping()) != nil
            }
        }

        func run() async {
            while !Task.isCancelled {
                let t0 = DispatchTime.now().uptimeNanoseconds
                guard await ask() else { break }
                let took = DispatchTime.now().uptimeNanoseconds - t0
                let ready = state.withLock { s -> [CheckedContinuation<Void, Never>] in
                    s.latencies.record(nanos: took)
                    s.completed += 1
                    let ready = s.waiters.filter { $0.after <= s.completed }.map(\.continuation)
                    s.waiters.removeAll { $0.after <= s.completed }
                    return ready
                }
                for c in ready { c.resume() }
                if pause > .zero { try? await Task.sleep(for: pause) }
            }
            let left = state.withLock { s in defer { s.waiters = []; s.stopped = true }; return s.waiters.map(\.continuation) }
            for c in left { c.resume() }
            await connection.close()
        }

        /// The latencies since the last call, once every probe request in
        /// flight now has been answered (a request held up by the phase that
        /// just ended counts for it); then starts afresh.
        func settled() async -> LatencyHistogram {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { s -> Bool in
                    if s.stopped { return true }
                    s.waiters.append((s.completed + 2, continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
            }
            return state.withLock { s in defer { s.latencies = LatencyHistogram() }; return s.latencies }
        }
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
