import ChecklistCommandLine
import ChecklistClient
import ChecklistLatency
import ChecklistRandom
import Foundation
import Synchronization

/// `checklist-bench scroll`: a table view scrolling through a huge list,
/// frame by frame, served by a `PagingCursor` with a fixed pool of row
/// buffers. A frame hitches when one of its visible rows is not ready.
/// `--mode scrub` jumps to random offsets instead, like dragging the scroll
/// indicator.
enum ScrollScenario {
    /// The scenario's options, for the parser and `--help`.
    static let spec = CommandSpec(
        name: "scroll", summary: "a table view scrolling a huge list",
        options: [
            .value("--items", "N", "items of the list (default 1000000)"),
            .value("--viewport", "ROWS", "rows on screen (default 20)"),
            .value("--fps", "N", "frames a second (default 120)"),
            .value("--rows-per-second", "N", "scroll speed (default 10000)"),
            .value("--seconds", "S", "how long it runs (default 10)"),
            BenchOptions.textBytes(40),
            .value("--mode", "scroll|scrub", "scroll on, or jump about (default scroll)"),
            .value("--page", "N", "rows a GET_PAGE (default 100)"),
            .value("--prefetch-pages", "N", "pages fetched ahead (default 4)"),
            BenchOptions.server, BenchOptions.postgres,
            BenchOptions.json,
        ] + BenchOptions.tls)

    /// The options of one run.
    struct Settings {
        let items: Int
        let viewport: Int
        let fps: Double
        let rowsPerSecond: Double
        let seconds: Double
        let textBytes: Int
        let pageSize: Int
        let prefetchPages: Int
        /// `scroll` or `scrub`.
        let mode: String

        init(_ args: BenchArguments) throws {
            items = try args.int("items", default: 1_000_000, min: 1)
            viewport = try args.int("viewport", default: 20, min: 1)
            fps = try args.double("fps", default: 120)
            rowsPerSecond = try args.double("rows-per-second", default: 10_000)
            seconds = try args.double("seconds", default: 10)
            textBytes = try args.int("text-bytes", default: 40)
            pageSize = try args.int("page", default: 100, min: 1)
            prefetchPages = try args.int("prefetch-pages", default: 4)
            mode = args.string("mode") ?? "scroll"
            guard mode == "scroll" || mode == "scrub" else {
                throw UsageError("--mode is scroll or scrub")
            }
        }
    }

    /// What the frames saw.
    struct FramesOutcome {
        var frames = 0
        var hitched = 0
        var rowsShown = 0
        /// From a frame's first hitch to the frame whose rows were all ready.
        var hitchRecovery = LatencyHistogram()
    }

    static func run(_ args: BenchArguments) async throws {
        let settings = try Settings(args)
        let target = try BenchTarget(args)
        defer { target.stop() }
        let setup = try await target.connect()
        let list = try await target.benchList(items: settings.items, textBytes: settings.textBytes, on: setup)
        await setup.close()

        let connection = try await target.connect(name: "checklist-bench-scroll")
        let fetches = Mutex((latency: LatencyHistogram(), bytes: 0, rows: 0))
        let cursor = try await PagingCursor(connection: connection, list: list.id, viewport: settings.viewport,
                                            pageSize: settings.pageSize, prefetchPages: settings.prefetchPages) { nanos, bytes, rows in
            fetches.withLock {
                $0.latency.record(nanos: nanos)
                $0.bytes += bytes
                $0.rows += rows
            }
        }
        // Measure the scroll alone: forget the memory peak of setting up.
        ResourceUsage.resetPeakResident()
        var cpu = ToolCPU()
        let initialLoad = try await loadFirstScreen(cursor, settings)
        let outcome = try await showFrames(cursor, settings)
        cpu.stop()
        if let failure = cursor.failure { throw failure }
        await connection.close()
        let fetched = fetches.withLock { $0 }

        var report = BenchReport()
        report.add("scenario", settings.mode)
        report.add("transport", target.transport)
        report.add("items", settings.items)
        report.add("frames", outcome.frames)
        report.add("hitchedFrames", outcome.hitched)
        report.add("poolSize", cursor.poolSize)
        report.add("buffersAllocated", cursor.buffersAllocated)
        report.addLatencies(fetched.latency, prefix: "fetch")
        report.add("hitchRecoveryP99Ms", outcome.hitchRecovery.quantileMs(0.99))
        report.add("initialLoadMs", initialLoad.maxMs)
        report.add("peakRssBytes", ResourceUsage.peakResidentBytes())
        report.add("wireBytesPerRow", Double(fetched.bytes) / Double(max(1, fetched.rows)))
        report.add("rowsShown", outcome.rowsShown)
        report.addToolCPU(cpu, requests: Int(fetched.latency.count))
        report.print(json: args.flag("json"))
    }

    /// The table's first screen, like viewDidLoad: not a scroll frame.
    /// Returns how long it took to be ready (at most 10 s, else it throws).
    private static func loadFirstScreen(_ cursor: PagingCursor, _ settings: Settings) async throws -> LatencyHistogram {
        let clock = ContinuousClock()
        let loadStart = clock.now
        cursor.scroll(toTop: 0)
        while !(0..<min(settings.items, settings.viewport)).allSatisfy({ cursor.withRow($0) { _ in true } != nil }) {
            if let failure = cursor.failure { throw failure }
            guard loadStart.duration(to: clock.now) < .seconds(10) else {
                throw BenchFailure(description: "the first screen did not load within 10 s")
            }
            try await clock.sleep(for: .microseconds(200))
        }
        var initialLoad = LatencyHistogram()
        initialLoad.record(loadStart.duration(to: clock.now))
        return initialLoad
    }

    /// Shows `--seconds` of frames at `--fps`: each scrolls (or, scrubbing,
    /// every half second jumps) and hitches when a visible row is not ready.
    private static func showFrames(_ cursor: PagingCursor, _ settings: Settings) async throws -> FramesOutcome {
        let clock = ContinuousClock()
        let (items, viewport, fps) = (settings.items, settings.viewport, settings.fps)
        let frameInterval = Duration.nanoseconds(Int64(1e9 / fps))
        var outcome = FramesOutcome(frames: Int(settings.seconds * fps))
        var rng = SplitMix64(seed: 7)
        let maxTop = max(0, items - viewport)
        let start = clock.now
        var top = 0
        var pendingSince: ContinuousClock.Instant?
        for frame in 0..<outcome.frames {
            if settings.mode == "scroll" {
                top = min(maxTop, Int(Double(frame) * settings.rowsPerSecond / fps))
            } else if frame % Int(fps / 2) == 0 {
                top = Int(rng.next() % UInt64(maxTop + 1))
            }
            cursor.scroll(toTop: top)
            let visible = top..<min(items, top + viewport)
            let ready = visible.allSatisfy { i in cursor.withRow(i) { $0.textBytes.count } != nil }
            if ready {
                outcome.rowsShown += visible.count
                if let since = pendingSince {
                    outcome.hitchRecovery.record(since.duration(to: clock.now))
                    pendingSince = nil
                }
            } else {
                outcome.hitched += 1
                if pendingSince == nil { pendingSince = clock.now }
            }
            try await clock.sleep(until: start.advanced(by: frameInterval * (frame + 1)), tolerance: .microseconds(100))
        }
        return outcome
    }
}
