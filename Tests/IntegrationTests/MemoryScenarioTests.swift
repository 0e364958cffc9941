import ChecklistTesting
import Testing

/// `checklist-bench memory` on a small list: it fills its own server, waits
/// for that server's log to come to rest before reading its memory, restarts
/// it, and reports the documented keys (Benchmarks/README.md, "memory").
@Suite(.timeLimit(.minutes(3)))
struct MemoryScenarioTests {
    @Test func theMemoryToolReadsAFilledServerOnceItsLogIsAtRest() async throws {
        let run = try BackgroundCommand("checklist-bench", ["memory", "--items", "5000", "--redis", "off", "--json"])
        let report = try benchJSON(try await run.wait())
        #expect(report["scenario"] as? String == "memory")
        #expect(report["items"] as? Int == 5000)
        let settle = try #require(report["settleMs"] as? Double, "no settleMs in \(report)")
        // The tool gives up after 10 s; a number means the log came to rest.
        #expect(settle >= 0 && settle < 10_000)
        for key in ["serverRssBeforeBytes", "serverRssFilledBytes", "serverRssRestartedBytes"] {
            #expect((report[key] as? Int ?? 0) > 0, "\(key) in \(report)")
        }
        #expect((report["restartMs"] as? Double ?? 0) > 0)
        #expect(report["fillBytesPerItem"] is Double && report["restartBytesPerItem"] is Double)
        // --redis off: no comparison is made up.
        #expect(report["redisBytesPerItem"] == nil && report["fillRatioToRedis"] == nil)
    }
}
